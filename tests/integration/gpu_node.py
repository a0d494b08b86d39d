"""A GPU node for the tests: the fake libnvidia-ml.so (tests/fakes/fake_nvml, driven by a
config file the test rewrites) and a fake sysfs tree of InfiniBand ports, as an agent's
environment reads them (TRAINWATCH_NVML_LIBRARY, FAKE_NVML_CONFIG, TRAINWATCH_SYSFS_ROOT)."""
import os
import pathlib

BUILD = pathlib.Path(__file__).resolve().parents[2] / os.environ.get("TRAINWATCH_BUILD", "build")
FAKE_NVML = BUILD / "tests" / "fake_nvml" / "libnvidia-ml.so.1"


class GpuNode:
    def __init__(self, tmp, gpus=8, ports=("mlx5_0", "mlx5_1")):
        self.config = tmp / "nvml.conf"
        self.sysfs = tmp / "sys"
        self.gpus = gpus
        self.lines = []
        self.set()
        for device in ports:
            self.port(device, "ACTIVE", 0)

    def env(self):
        return {"TRAINWATCH_NVML_LIBRARY": str(FAKE_NVML), "FAKE_NVML_CONFIG": str(self.config),
                "TRAINWATCH_SYSFS_ROOT": str(self.sysfs)}

    def set(self, *lines):
        """The fake driver's state: 8 H100s with memory in use and two NVLinks each, plus `lines`
        (directives of tests/fakes/fake_nvml/fake_nvml.c), written whole (the fake re-reads it)."""
        base = [f"count {self.gpus}"]
        for i in range(self.gpus):
            base += [f"mem {i} {40 + i}000000000 80000000000", f"nvlinks {i} 2", f"nvlink {i} 0 1", f"nvlink {i} 1 1"]
        tmp = self.config.with_suffix(".tmp")
        tmp.write_text("\n".join(base + list(lines)) + "\n")
        os.replace(tmp, self.config)

    def port(self, device, state, link_downed, port=1):
        """Port `port` of `device` as the mlx5 driver lays it out under class/infiniband."""
        d = self.sysfs / "class" / "infiniband" / device / "ports" / str(port)
        (d / "counters").mkdir(parents=True, exist_ok=True)
        (d / "state").write_text("4: ACTIVE\n" if state == "ACTIVE" else "1: DOWN\n")
        (d / "phys_state").write_text("5: LinkUp\n" if state == "ACTIVE" else "2: Polling\n")
        (d / "rate").write_text("400 Gb/sec (4X NDR)\n")
        (d / "link_layer").write_text("InfiniBand\n")
        (d / "counters" / "link_downed").write_text(f"{link_downed}\n")
        (d / "counters" / "symbol_error").write_text("0\n")
