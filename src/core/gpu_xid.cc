#include "core/gpu_xid.h"

namespace trainwatch {
namespace {

using A = XidAction;

// One row for a code or a run of codes that share a meaning and an action, in code order.
struct XidRow {
  unsigned first, last;
  std::string_view meaning;
  XidAction action;
  bool application;  // usually the application's own fault
};

// NVIDIA's catalog (Ampere and newer), the codes it lists as used; the meanings in our words.
constexpr XidRow kXids[] = {
    {8, 8, "the GPU stopped processing (idle timeout)", A::kRestartApp, false},
    {11, 11, "an invalid push buffer stream", A::kRestartApp, true},
    {13, 13, "a graphics engine exception (an illegal instruction or address in a kernel)", A::kRestartApp,
     true},
    {25, 25, "an illegal push buffer stream", A::kRestartApp, true},
    {31, 31, "a GPU memory page fault (an illegal address)", A::kRestartApp, true},
    {32, 32, "a corrupted push buffer stream", A::kRestartApp, true},
    {37, 37, "a driver firmware error", A::kIgnore, false},
    {38, 38, "a driver firmware watchdog timeout", A::kIgnore, false},
    {39, 41, "a copy engine exception", A::kRestartApp, false},
    {43, 43, "the GPU stopped the application's channel", A::kIgnore, true},
    {44, 44, "a graphics engine fault during a context switch", A::kIgnore, false},
    {45, 45, "a preemptive cleanup after an earlier error or the process's end", A::kXid45Workflow, true},
    {46, 46, "the GPU stopped processing (timeout)", A::kResetGpu, false},
    {48, 48, "a double-bit ECC error", A::kXid48Workflow, false},
    {54, 54, "the board's auxiliary power is not connected", A::kCheckPower, false},
    {60, 60, "a video processor exception", A::kRestartApp, false},
    {62, 62, "an internal micro-controller halted", A::kResetGpu, false},
    {63, 63, "a memory row remapping or page retirement was recorded", A::kIgnore, false},
    {64, 64, "a memory row remapping or page retirement failed", A::kResetGpu, false},
    {66, 67, "an illegal access by the driver", A::kIgnore, false},
    {68, 68, "a video decoder exception", A::kRestartApp, false},
    {69, 69, "a graphics engine class error", A::kRestartApp, true},
    {70, 72, "a copy engine error", A::kRestartApp, false},
    {74, 74, "an NVLink error", A::kNvlinkWorkflow, false},
    {75, 77, "a copy engine error", A::kRestartApp, false},
    {78, 78, "a vGPU failed to start", A::kUpdateDriver, false},
    {79, 79, "the GPU fell off the bus", A::kRebootNode, false},
    {80, 80, "corrupted data was sent to the GPU", A::kRestartApp, true},
    {82, 84, "a video decoder or JPEG engine error", A::kRestartApp, false},
    {85, 85, "a copy engine error", A::kRestartApp, false},
    {86, 86, "an optical flow accelerator exception", A::kRestartApp, false},
    {88, 89, "a video decoder error", A::kRestartApp, false},
    {92, 92, "a high rate of single-bit ECC errors", A::kIgnore, false},
    {93, 93, "the InfoROM wear limit was exceeded", A::kIgnore, false},
    {94, 94, "a contained memory error", A::kRestartApp, false},
    {95, 95, "an uncontained memory error", A::kResetGpu, false},
    {96, 105, "a video decoder or JPEG engine error", A::kRestartApp, false},
    {106, 107, "an SMBPBI test message", A::kIgnore, false},
    {109, 109, "a context switch timeout", A::kResetGpu, false},
    {110, 110, "a security fault", A::kResetGpu, false},
    {119, 119, "a GSP firmware RPC timeout", A::kResetGpu, false},
    {120, 120, "a GSP firmware error", A::kResetGpu, false},
    {121, 121, "a C2C link error", A::kIgnore, false},
    {126, 135, "a copy engine error", A::kRestartApp, false},
    {136, 136, "link training failed", A::kResetGpu, false},
    {137, 137, "an NVLink privilege error", A::kIgnore, false},
    {139, 139, "an optical flow accelerator error", A::kRestartApp, false},
    {140, 140, "an unrecovered ECC error", A::kResetGpu, false},
    {141, 141, "a CUDA fast path error", A::kIgnore, false},
    {143, 143, "the GPU failed to initialise", A::kResetGpu, false},
    {144, 150, "an NVLink5 error", A::kNvlink5Workflow, false},
    {151, 151, "a key rotation error", A::kRestartVm, false},
    {152, 153, "a deep learning accelerator error", A::kIgnore, false},
    {154, 154, "the driver's GPU recovery action changed", A::kRecoveryAction, false},
    {155, 156, "an NVLink software-defined error or a resource retirement", A::kResetGpu, false},
    {157, 157, "a resource retirement failed", A::kIgnore, false},
    {158, 158, "a fatal GPU timeout", A::kResetGpu, false},
    {159, 159, "a CHI non-data error", A::kCheckUvm, false},
    {160, 161, "a channel retirement event", A::kIgnore, false},
};

const XidRow* find_row(unsigned code) {
  for (const auto& row : kXids) {
    if (code >= row.first && code <= row.last) return &row;
    if (row.first > code) break;
  }
  return nullptr;
}

XidClass class_of(const XidRow& row) {
  if (row.application) return XidClass::kApplication;
  switch (row.action) {
    case A::kRestartApp:
    case A::kCheckUvm: return XidClass::kApplicationHit;
    case A::kIgnore: return XidClass::kInformational;
    default: return XidClass::kNodeFault;
  }
}

}  // namespace

XidInfo describe_xid(unsigned code) {
  XidInfo info;
  info.code = code;
  const XidRow* row = find_row(code);
  if (row == nullptr) {
    info.meaning = "not in NVIDIA's catalog";
    return info;
  }
  info.known = true;
  info.meaning = row->meaning;
  info.action = row->action;
  info.cls = class_of(*row);
  return info;
}

std::string_view action_text(XidAction action) {
  switch (action) {
    case A::kRestartApp: return "restart the application";
    case A::kResetGpu: return "reset the GPU";
    case A::kRebootNode: return "reboot the node";
    case A::kRestartVm: return "restart the virtual machine";
    case A::kIgnore: return "no action needed";
    case A::kContactSupport: return "contact NVIDIA support";
    case A::kCheckPower: return "check the board's power cabling";
    case A::kUpdateDriver: return "update the driver and firmware";
    case A::kXid45Workflow: return "follow the XID before it; alone, restart the application";
    case A::kXid48Workflow: return "reset the GPU, then check its row remapping";
    case A::kNvlinkWorkflow: return "reset the GPU; if the NVLink error returns, contact support";
    case A::kNvlink5Workflow: return "reset the GPU and decode the NVLink5 error with NVIDIA's workflow";
    case A::kRecoveryAction: return "do what the driver's GPU recovery action says";
    case A::kCheckUvm: return "check the application's unified memory";
    case A::kUnknown: break;
  }
  return "contact NVIDIA support";
}

std::string xid_sentence(unsigned code) {
  const XidInfo info = describe_xid(code);
  return "XID " + std::to_string(code) + ", " + std::string(info.meaning) +
         " \u2014 NVIDIA: " + std::string(action_text(info.action));
}

}  // namespace trainwatch
