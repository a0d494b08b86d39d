// What an XID means and what NVIDIA says to do about it: the agent (/health) and the server
// (findings, alerts) both name an XID with this one table. Pure.
//
// The immediate actions are the "Resolution Bucket (Immediate Action)" column of NVIDIA's
// Xid catalog for Ampere and newer GPUs (docs.nvidia.com/deploy/xid-errors/
// analyzing-xid-catalog.html); the meanings are ours, one short phrase each. An XID the
// catalog does not list (or lists as unused) reads as "not in NVIDIA's catalog" and is
// treated as a fault of the node: a new XID is far likelier to be the hardware's news than
// the application's.
#pragma once

#include <string>
#include <string_view>

namespace trainwatch {

// NVIDIA's immediate action, one value per bucket of the catalog.
enum class XidAction {
  kUnknown,          // not in the catalog, or no action given there
  kRestartApp,       // RESTART_APP
  kResetGpu,         // RESET_GPU
  kRebootNode,       // RESTART_BM
  kRestartVm,        // RESTART_VM
  kIgnore,           // IGNORE
  kContactSupport,   // CONTACT_SUPPORT
  kCheckPower,       // CHECK_MECHANICALS
  kUpdateDriver,     // UPDATE_SWFW
  kXid45Workflow,    // WORKFLOW_XID_45: follow the XID before it
  kXid48Workflow,    // WORKFLOW_XID_48: a double-bit ECC error
  kNvlinkWorkflow,   // WORKFLOW_NVLINK_ERR
  kNvlink5Workflow,  // WORKFLOW_NVLINK5_ERR
  kRecoveryAction,   // XID_154: the driver's GPU recovery action says
  kCheckUvm,         // CHECK_UVM
};

// How trainwatch treats an XID, from the action and whose fault it usually is:
//  - kApplication: the application's own (an illegal address, a bad launch): a finding on
//    the rank that uses the GPU, never a fault of the node;
//  - kApplicationHit: the application must restart, but the cause may be the GPU's (a
//    contained memory error, a copy engine error): the rank is down, the node is not blamed;
//  - kInformational: NVIDIA says no action is needed: a warning;
//  - kNodeFault: the GPU must be reset, the node rebooted or inspected: a node fault.
enum class XidClass { kApplication, kApplicationHit, kInformational, kNodeFault };

struct XidInfo {
  unsigned code = 0;
  std::string_view meaning;  // "the GPU fell off the bus"; "not in NVIDIA's catalog" when unknown
  XidAction action = XidAction::kUnknown;
  XidClass cls = XidClass::kNodeFault;
  bool known = false;  // listed in the catalog
};

XidInfo describe_xid(unsigned code);

// The action as a person reads it: "reboot the node".
std::string_view action_text(XidAction action);

// "XID 79, the GPU fell off the bus \u2014 NVIDIA: reboot the node"
std::string xid_sentence(unsigned code);

// Usually the application's own fault (kApplication): reported on the rank, never paged as
// the node's.
inline bool is_application_xid(unsigned code) { return describe_xid(code).cls == XidClass::kApplication; }

}  // namespace trainwatch
