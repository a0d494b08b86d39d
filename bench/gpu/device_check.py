#!/usr/bin/env python3
"""The agent against a real NVIDIA driver, checked field by field against nvidia-smi.

The fake libnvidia-ml.so the tests load proves nothing about the agent's NVML declarations
(struct layouts, versioned entry points: src/agent/nvml_api.h). This does, in one run of a
few minutes on a machine with an NVIDIA GPU and its driver, given what bench/gpu/pack.sh
packed here (the agent with its libraries, the check itself):

 1. a process takes GPU memory (PyTorch when it is installed with CUDA, else the CUDA
    driver API through ctypes: cuInit, cuCtxCreate, cuMemAlloc) and, when the packed
    libtrainwatch loads, registers as rank 0 of a job;
 2. the packed agent runs against the real libnvidia-ml.so.1 and reads every GPU;
 3. its /metrics series are compared with `nvidia-smi -q -x` for each GPU: name, UUID, bus
    id, memory (total, used), temperature and slowdown threshold, power, SM and memory
    clocks, volatile uncorrected ECC errors, remapped rows, retired pages, PCIe (generation,
    width, replays), clock event reasons, NVLinks active (`nvidia-smi nvlink --status`),
    the recovery action where nvidia-smi shows one; and the process holding memory is
    found by its pid in the agent's list for its GPU (and as rank 0's GPU, when it is a rank).

    bash bench/gpu/pack.sh                       # here: build-gpu-check/
    python3 build-gpu-check/device_check.py --pack build-gpu-check --out OUT

Writes OUT/gpu-check.md (the table for bench/RESULTS.md), OUT/summary.json and the raw
answers (health.json, metrics.txt, nvidia-smi.xml, nvlink.txt, agent.log). Exit status 0
when every compared field agrees within its tolerance, 1 when one does not, 2 when the
check could not run (no nvidia-smi, no GPU, the agent did not start).
"""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

HOLD_BYTES = 256 << 20


# ---- the process that holds GPU memory (run as `device_check.py --hold`) ----

def hold_with_torch():
    import torch  # noqa: PLC0415 (only when present)
    if not torch.cuda.is_available():
        raise RuntimeError("torch without CUDA")
    torch.cuda.set_device(0)
    block = torch.empty(HOLD_BYTES, dtype=torch.uint8, device="cuda")
    return "torch " + torch.__version__, block


def hold_with_driver_api():
    cuda = ctypes.CDLL("libcuda.so.1")
    device, context, pointer = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    for name, call in (("cuInit", lambda: cuda.cuInit(0)),
                       ("cuDeviceGet", lambda: cuda.cuDeviceGet(ctypes.byref(device), 0)),
                       ("cuCtxCreate_v2", lambda: cuda.cuCtxCreate_v2(ctypes.byref(context), 0, device)),
                       ("cuMemAlloc_v2", lambda: cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(HOLD_BYTES)))):
        rc = call()
        if rc != 0:
            raise RuntimeError(f"{name} failed with CUDA error {rc}")
    return "CUDA driver API (ctypes)", (context, pointer)


class TwOptions(ctypes.Structure):
    # tw_options of include/trainwatch/trainwatch.h: zero fields come from the environment.
    _fields_ = [("struct_size", ctypes.c_uint32), ("job", ctypes.c_char_p), ("dir", ctypes.c_char_p),
                ("rank", ctypes.c_int32), ("local_rank", ctypes.c_int32), ("world_size", ctypes.c_int32),
                ("rank_set", ctypes.c_uint8), ("local_rank_set", ctypes.c_uint8),
                ("world_size_set", ctypes.c_uint8), ("reserved0", ctypes.c_uint8),
                ("master_addr", ctypes.c_char_p), ("master_port", ctypes.c_int32)]


def register_as_rank(pack):
    """rank 0 of the check's job through the packed libtrainwatch; None when it cannot load."""
    try:
        for lib in ("libstdc++.so.6", "libgcc_s.so.1"):
            path = os.path.join(pack, "lib", lib)
            if os.path.exists(path):
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        tw = ctypes.CDLL(os.path.join(pack, "lib", "libtrainwatch.so.1"))
    except OSError as e:
        return None, str(e)
    options = TwOptions(struct_size=ctypes.sizeof(TwOptions))
    handle = ctypes.c_void_p()
    if tw.tw_open(ctypes.byref(options), ctypes.byref(handle)) != 0:
        return None, "tw_open failed"
    tw.tw_set_status(handle, 1)  # TW_STATUS_TRAINING
    return (tw, handle), ""


def hold(pack):
    try:
        how, keep = hold_with_torch()
    except Exception:  # noqa: BLE001 (no torch, or no CUDA in it: the driver API then)
        how, keep = hold_with_driver_api()
    rank, why = register_as_rank(pack)
    print(json.dumps({"how": how, "rank": rank is not None, "why_not_rank": why}), flush=True)
    step = 0
    while True:
        step += 1
        if rank:
            rank[0].tw_step(rank[1], ctypes.c_int64(step), ctypes.c_double(1.0))
        time.sleep(0.2)
    del keep


# ---- nvidia-smi ----

def smi_gpus(xml_text):
    """{bus id: {field: value}} from `nvidia-smi -q -x`, in the agent's units."""
    root = ET.fromstring(xml_text)
    out = {}
    for g in root.findall("gpu"):
        def text(path):
            node = g.find(path)
            return node.text.strip() if node is not None and node.text else None

        def number(path, scale=1.0):
            t = text(path)
            m = re.match(r"[-+]?[0-9.]+", t or "")
            return float(m.group(0)) * scale if m else None

        bus = (g.get("id") or text("pci/pci_bus_id") or "").upper()
        f = {
            "name": text("product_name"), "uuid": text("uuid"),
            "memory_total_bytes": number("fb_memory_usage/total", 1 << 20),
            "memory_used_bytes": number("fb_memory_usage/used", 1 << 20),
            # Newer drivers show the driver's reservation apart; NVML's (v1) used and total
            # count it in.
            "memory_reserved_bytes": number("fb_memory_usage/reserved", 1 << 20) or 0.0,
            "temperature_celsius": number("temperature/gpu_temp"),
            "slowdown_temperature_celsius": number("temperature/gpu_temp_slow_threshold"),
            "power_watts": number("gpu_power_readings/power_draw") or number("power_readings/power_draw"),
            "sm_clock_hertz": number("clocks/sm_clock", 1e6), "memory_clock_hertz": number("clocks/mem_clock", 1e6),
            "pcie_link_generation": number("pci/pci_gpu_link_info/pcie_gen/current_link_gen"),
            "pcie_link_generation_max": number("pci/pci_gpu_link_info/pcie_gen/max_link_gen"),
            "pcie_link_width": number("pci/pci_gpu_link_info/link_widths/current_link_width"),
            "pcie_link_width_max": number("pci/pci_gpu_link_info/link_widths/max_link_width"),
            "pcie_replays_total": number("pci/replay_counter"),
            "remapped_correctable": number("remapped_rows/remapped_row_corr"),
            "remapped_uncorrectable": number("remapped_rows/remapped_row_unc"),
            "row_remap_pending": yes_no(text("remapped_rows/remapped_row_pending")),
            "row_remap_failure": yes_no(text("remapped_rows/remapped_row_failure")),
            "recovery_action": text("gpu_recovery_action"),
        }
        # NVML's volatile uncorrected total spans every memory: DRAM and SRAM (one count, or
        # parity and SEC-DED apart in newer drivers); older drivers wrote double_bit/total.
        ecc = [number("ecc_errors/volatile/" + p) for p in ("dram_uncorrectable", "sram_uncorrectable",
                                                             "sram_uncorrectable_parity", "sram_uncorrectable_secded")]
        if all(v is None for v in ecc):
            ecc = [number("ecc_errors/volatile/double_bit/total")]
        f["ecc_uncorrected_errors_total"] = None if all(v is None for v in ecc) else sum(v or 0 for v in ecc)
        reasons = g.find("clocks_event_reasons")
        if reasons is None:
            reasons = g.find("clocks_throttle_reasons")
        f["clock_event_reasons"] = None if reasons is None else sorted(
            REASON_WORDS.get(c.tag, c.tag) for c in reasons if (c.text or "").strip() == "Active")
        f["processes"] = {int(p.findtext("pid")): number_of(p.findtext("used_memory"), 1 << 20)
                          for p in g.findall("processes/process_info") if p.findtext("pid")}
        out[bus] = f
    return out


# nvidia-smi's tags for the clock event reasons, as the agent words them (core/gpu_terms.h).
REASON_WORDS = {
    "clocks_event_reason_gpu_idle": "gpu_idle", "clocks_throttle_reason_gpu_idle": "gpu_idle",
    "clocks_event_reason_applications_clocks_setting": "applications_clocks",
    "clocks_throttle_reason_applications_clocks_setting": "applications_clocks",
    "clocks_event_reason_sw_power_cap": "sw_power_cap", "clocks_throttle_reason_sw_power_cap": "sw_power_cap",
    "clocks_event_reason_hw_slowdown": "hw_slowdown", "clocks_throttle_reason_hw_slowdown": "hw_slowdown",
    "clocks_event_reason_hw_thermal_slowdown": "hw_thermal_slowdown",
    "clocks_throttle_reason_hw_thermal_slowdown": "hw_thermal_slowdown",
    "clocks_event_reason_hw_power_brake_slowdown": "hw_power_brake_slowdown",
    "clocks_throttle_reason_hw_power_brake_slowdown": "hw_power_brake_slowdown",
    "clocks_event_reason_sync_boost": "sync_boost", "clocks_throttle_reason_sync_boost": "sync_boost",
    "clocks_event_reason_sw_thermal_slowdown": "sw_thermal_slowdown",
    "clocks_throttle_reason_sw_thermal_slowdown": "sw_thermal_slowdown",
    "clocks_event_reason_display_clocks_setting": "display_clock_setting",
    "clocks_throttle_reason_display_clocks_setting": "display_clock_setting",
}


def yes_no(text):
    return None if text is None else (1.0 if text.lower() in ("yes", "true") else 0.0)


def number_of(text, scale):
    m = re.match(r"[0-9.]+", text or "")
    return float(m.group(0)) * scale if m else None


def smi_nvlinks(text):
    """{gpu index: active link count} from `nvidia-smi nvlink --status`."""
    out, gpu = {}, None
    for line in text.splitlines():
        m = re.match(r"GPU (\d+):", line)
        if m:
            gpu = int(m.group(1))
            out[gpu] = 0
        elif gpu is not None and re.match(r"\s+Link \d+:", line) and "inactive" not in line.lower():
            out[gpu] += 1
    return out


# ---- the agent's answers ----

def agent_series(metrics_text):
    """{gpu index: {series name without trainwatch_gpu_: value}} plus the labelled ones."""
    out = {}
    for line in metrics_text.splitlines():
        m = re.match(r'trainwatch_gpu_([a-z_]+)\{([^}]*)\} (\S+)$', line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        g = out.setdefault(int(labels["gpu"]), {"reasons": set(), "labels": labels})
        value = float(m.group(3))
        name = m.group(1)
        if name == "clock_event_reason_active":
            if value == 1:
                g["reasons"].add(labels["reason"])
        elif name == "remapped_rows_total":
            g["remapped_" + labels["cause"]] = value
        elif name == "nvlink_up":
            g["nvlinks_active"] = g.get("nvlinks_active", 0) + value
        elif name == "info":
            g["info"] = labels
        elif name not in ("process_memory_used_bytes", "nvlink_errors_total", "retired_pages_total"):
            g[name] = value
    return out


def close(a, b, absolute, relative=0.0):
    return a is not None and b is not None and abs(a - b) <= max(absolute, relative * max(abs(a), abs(b)))


def compare_gpu(index, mine, smi, nvlinks, rows):
    """Rows of (gpu, field, agent, nvidia-smi, verdict): ok, MISMATCH, or 'varies' where the
    two reads, a moment apart, may differ by design (load-dependent clocks, link generation)."""
    info = mine.get("info", {})

    def row(field, a, b, same, transient=False):
        if b is None:
            verdict = "n/a (nvidia-smi shows none)" if a is None else "agent only"
        elif a is None:
            verdict = "MISMATCH (the agent has none)"
        else:
            verdict = "ok" if same(a, b) else ("varies" if transient else "MISMATCH")
        rows.append((index, field, a, b, verdict))

    row("name", info.get("name"), smi["name"], lambda a, b: a == b)
    row("uuid", mine["labels"].get("uuid"), smi["uuid"], lambda a, b: a == b)
    reserved = smi["memory_reserved_bytes"]
    row("memory total (bytes)", mine.get("memory_total_bytes"), smi["memory_total_bytes"],
        lambda a, b: close(a, b, 64 << 20, 0.01) or close(a, b + reserved, 64 << 20, 0.01))
    row("memory used (bytes)", mine.get("memory_used_bytes"), smi["memory_used_bytes"],
        lambda a, b: close(a, b, 256 << 20, 0.02) or close(a, b + reserved, 256 << 20, 0.02), transient=True)
    row("temperature (°C)", mine.get("temperature_celsius"), smi["temperature_celsius"], lambda a, b: close(a, b, 3))
    row("slowdown temperature (°C)", mine.get("slowdown_temperature_celsius"), smi["slowdown_temperature_celsius"],
        lambda a, b: a == b)
    row("power (W)", mine.get("power_watts"), smi["power_watts"], lambda a, b: close(a, b, 10, 0.15), transient=True)
    row("SM clock (Hz)", mine.get("sm_clock_hertz"), smi["sm_clock_hertz"], lambda a, b: close(a, b, 1e8, 0.1),
        transient=True)
    row("memory clock (Hz)", mine.get("memory_clock_hertz"), smi["memory_clock_hertz"],
        lambda a, b: close(a, b, 1e7, 0.05))
    row("uncorrected ECC, volatile", mine.get("ecc_uncorrected_errors_total"), smi["ecc_uncorrected_errors_total"],
        lambda a, b: a == b)
    for field in ("remapped_correctable", "remapped_uncorrectable", "row_remap_pending", "row_remap_failure",
                  "pcie_link_generation_max", "pcie_link_width_max", "pcie_replays_total"):
        row(field.replace("_", " "), mine.get(field), smi[field], lambda a, b: a == b)
    for field in ("pcie_link_generation", "pcie_link_width"):
        row(field.replace("_", " "), mine.get(field), smi[field], lambda a, b: a == b, transient=True)
    row("clock event reasons", sorted(mine["reasons"]) if "clock_event_reasons" in mine else None,
        smi["clock_event_reasons"], lambda a, b: a == b, transient=True)
    words = {"None": 0, "GPU Reset": 1, "Reset": 1, "Node Reboot": 2, "Reboot": 2, "Drain P2P": 3,
             "Drain and Reset": 4}
    row("recovery action", mine.get("recovery_action"),
        words.get(smi["recovery_action"]) if smi["recovery_action"] else None, lambda a, b: a == b)
    row("NVLinks active", mine.get("nvlinks_active", 0.0 if index in nvlinks else None),
        float(nvlinks[index]) if index in nvlinks else None, lambda a, b: a == b)


# ---- the run ----

def start_agent(pack, tmp, env, log_path):
    loader = next((os.path.join(pack, "lib", f) for f in os.listdir(os.path.join(pack, "lib"))
                   if f.startswith("ld-linux")), None)
    program = os.path.join(pack, "bin", "trainwatch-agent")
    args = ["--job", "gpucheck", "--dir", os.path.join(tmp, "slots"), "--listen", "127.0.0.1:0"]
    tries = ([[loader, "--library-path", os.path.join(pack, "lib"), program]] if loader else []) + [[program]]
    for command in tries:
        log = open(log_path, "wb")
        agent = subprocess.Popen(command + args, env=env, stderr=log)
        deadline = time.time() + 20
        while time.time() < deadline and agent.poll() is None:
            m = re.search(r"on http://([0-9.:]+)/health", open(log_path, errors="replace").read())
            if m:
                return agent, "http://" + m.group(1)
            time.sleep(0.2)
        agent.kill()
        agent.wait()
    return None, None


def get(url):
    """The body, whatever the status: /health answers 503 with its whole JSON when degraded."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()


def wait_for(what, check, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise TimeoutError(what)


def run_check(args):
    out = args.out
    os.makedirs(out, exist_ok=True)
    try:
        smi_version = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=30).stdout.strip()
    except FileNotFoundError:
        print("no nvidia-smi: this machine has no NVIDIA driver", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="gpu-check-")
    env = dict(os.environ, TRAINWATCH_JOB="gpucheck", TRAINWATCH_DIR=os.path.join(tmp, "slots"), RANK="0",
               LOCAL_RANK="0", WORLD_SIZE="1")
    holder = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--hold", "--pack", args.pack], env=env,
                              stdout=subprocess.PIPE, stderr=open(os.path.join(out, "holder.log"), "wb"))
    held = json.loads(holder.stdout.readline() or "{}")
    agent, base = start_agent(args.pack, tmp, env, os.path.join(out, "agent.log"))
    try:
        if not held or agent is None:
            print(f"could not run: holder {held or 'failed'}, agent {'started' if agent else 'did not start'}",
                  file=sys.stderr)
            return 2
        health = wait_for("the agent to list the holder's pid on a GPU", lambda: (
            h := json.loads(get(base + "/health"))) and any(
            p["pid"] == holder.pid for g in h["gpus"] for p in (g.get("processes") or [])) and h, args.timeout)
        metrics = get(base + "/metrics")
        xml_text = subprocess.run(["nvidia-smi", "-q", "-x"], capture_output=True, text=True, timeout=60).stdout
        nvlink_text = subprocess.run(["nvidia-smi", "nvlink", "--status"], capture_output=True, text=True,
                                     timeout=60).stdout
        return report(out, args, smi_version, held, holder.pid, health, metrics, xml_text, nvlink_text)
    finally:
        for p in (holder, agent):
            if p and p.poll() is None:
                p.kill()
                p.wait()


def report(out, args, smi_version, held, pid, health, metrics, xml_text, nvlink_text):
    for name, text in (("health.json", json.dumps(health, indent=1)), ("metrics.txt", metrics),
                       ("nvidia-smi.xml", xml_text), ("nvlink.txt", nvlink_text)):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    smi, mine, nvlinks = smi_gpus(xml_text), agent_series(metrics), smi_nvlinks(nvlink_text)
    rows = []
    for index, series in sorted(mine.items()):
        bus = series.get("info", {}).get("pci_bus_id", "").upper()
        if bus in smi:
            compare_gpu(index, series, smi[bus], nvlinks, rows)
        else:
            rows.append((index, "pci bus id", bus, sorted(smi), "MISMATCH (not in nvidia-smi)"))
    owner = [g for g in health["gpus"] for p in g["processes"] or [] if p["pid"] == pid]
    best = max(owner, key=lambda g: next(p["used_bytes"] or 0 for p in g["processes"] if p["pid"] == pid))
    used = next(p["used_bytes"] for p in best["processes"] if p["pid"] == pid)
    rows.append((best["index"], f"holder pid {pid} in the agent's process list", used, HOLD_BYTES,
                 "ok" if used and used >= HOLD_BYTES else "MISMATCH"))
    rank = next((r for r in health["ranks"] if r["pid"] == pid), None)
    if held.get("rank"):
        rows.append((best["index"], "rank 0's GPU (by pid)", rank and rank["gpu"], best["index"],
                     "ok" if rank and rank["gpu"] and rank["gpu"]["index"] == best["index"] and
                     rank["gpu"]["source"] == "nvml" else "MISMATCH"))
    failed = [r for r in rows if r[4].startswith("MISMATCH")]
    lines = [f"# trainwatch agent against the real driver ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"- driver and GPUs (nvidia-smi): {smi_version}",
             f"- agent commit: {open(os.path.join(args.pack, 'commit')).read().strip()}",
             f"- GPU memory held by: {held['how']}; as a rank: {held['rank']} {held.get('why_not_rank', '')}",
             f"- compared: {len(rows)} fields, {len(failed)} mismatches", "",
             "| GPU | field | agent | nvidia-smi | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {g} | {f} | {a} | {b} | {v} |" for g, f, a, b, v in rows]
    with open(os.path.join(out, "gpu-check.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"fields": len(rows), "mismatches": [list(map(str, r)) for r in failed]}, f, indent=1)
    print("\n".join(lines))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", default="build-gpu-check", help="what bench/gpu/pack.sh made")
    parser.add_argument("--out", default=os.environ.get("OUT", "gpu-check-out"))
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--hold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.pack = os.path.abspath(args.pack)
    if args.hold:
        hold(args.pack)
        return 0
    return run_check(args)


if __name__ == "__main__":
    sys.exit(main())
