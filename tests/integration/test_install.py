"""`cmake --install` of the build folder, as an operator or a C/C++ user finds it: the two
programs in bin/, the systemd units (which `systemd-analyze verify` accepts), the default
config and examples, and libtrainwatch with a header, a pkg-config file and a CMake package
that a program outside the tree builds and runs against."""
import os
import pathlib
import subprocess
import textwrap

import pytest

from test_jobs import BUILD

PREFIX = "/usr/local"  # the build folder's CMAKE_INSTALL_PREFIX (scripts/build.sh keeps CMake's default)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The DESTDIR the build folder was installed into; the prefix lies under it."""
    root = tmp_path_factory.mktemp("destdir")
    p = subprocess.run(["cmake", "--install", str(BUILD)], env={**os.environ, "DESTDIR": str(root)},
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return root


def test_the_layout_an_operator_expects(installed):
    usr = installed / PREFIX.lstrip("/")
    expected = ["bin/trainwatch", "bin/trainwatch-agent", "lib/libtrainwatch.so.1", "lib/libtrainwatch.so",
                "include/trainwatch/trainwatch.h", "include/trainwatch/trainwatch.hpp",
                "lib/pkgconfig/trainwatch.pc", "lib/cmake/trainwatch/trainwatchConfig.cmake",
                "etc/trainwatch/trainwatch.yaml", "etc/trainwatch/agent/example.env",
                "share/trainwatch/examples/demo.yaml", "share/trainwatch/prometheus/trainwatch.rules.yml",
                "share/trainwatch/grafana/trainwatch.json", "share/doc/trainwatch/docs/quickstart.md",
                "share/doc/trainwatch/docs/screenshot-dashboard.png",
                "lib/systemd/system/trainwatch.service",
                "lib/systemd/system/trainwatch-agent@.service"]
    missing = [path for path in expected if not (usr / path).exists()]
    assert not missing, f"not installed under {usr}: {missing}"
    assert os.access(usr / "bin/trainwatch-agent", os.X_OK)


def test_the_installed_default_config_is_valid(installed):
    config = installed / PREFIX.lstrip("/") / "etc/trainwatch/trainwatch.yaml"
    p = subprocess.run([str(installed / PREFIX.lstrip("/") / "bin/trainwatch"), "check", str(config)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert "ok, 1 monitors" in p.stdout


def test_systemd_accepts_the_units(installed, tmp_path):
    """systemd-analyze verify (offline; systemd need not be PID 1). It checks that each command
    exists, so the copies it reads name the DESTDIR's programs; the template unit is read
    as one instance of it."""
    usr = str(installed / PREFIX.lstrip("/"))
    units = installed / PREFIX.lstrip("/") / "lib/systemd/system"
    copies = []
    for name, as_name in (("trainwatch.service", "trainwatch.service"),
                          ("trainwatch-agent@.service", "trainwatch-agent@llama-7b.service")):
        text = (units / name).read_text()
        assert f"ExecStart={PREFIX}/bin/" in text, text
        copy = tmp_path / as_name
        copy.write_text(text.replace(f"={PREFIX}/bin/", f"={usr}/bin/"))
        copies.append(str(copy))
    p = subprocess.run(["systemd-analyze", "verify", *copies], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout + p.stderr) == (0, "")


CONSUMER = """
#include <stdio.h>
#include <trainwatch/trainwatch.h>
int main(void) {
  tw_handle *h = NULL;
  tw_status s = tw_open(NULL, &h);
  printf("abi %d open %d enabled %d\\n", TW_ABI_VERSION, (int)s, tw_is_enabled(h));
  tw_close(h);
  return 0;
}
"""


def run_consumer(program, installed, tmp_path):
    env = {**os.environ, "LD_LIBRARY_PATH": str(installed / PREFIX.lstrip("/") / "lib"),
           "TRAINWATCH_DIR": str(tmp_path / "slots"), "RANK": "0", "WORLD_SIZE": "1", "TRAINWATCH_JOB": "consumer"}
    p = subprocess.run([str(program)], env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_a_c_program_builds_with_pkg_config(installed, tmp_path):
    source = tmp_path / "consumer.c"
    source.write_text(CONSUMER)
    env = {**os.environ, "PKG_CONFIG_PATH": str(installed / PREFIX.lstrip("/") / "lib/pkgconfig"),
           "PKG_CONFIG_SYSROOT_DIR": str(installed)}
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "trainwatch"], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    subprocess.run(["cc", str(source), "-o", str(tmp_path / "consumer"), *flags], check=True, timeout=60)
    assert run_consumer(tmp_path / "consumer", installed, tmp_path) == "abi 1 open 0 enabled 1"


def test_a_cmake_project_finds_the_package(installed, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "consumer.c").write_text(CONSUMER)
    (project / "CMakeLists.txt").write_text(textwrap.dedent("""
        cmake_minimum_required(VERSION 3.25)
        project(consumer C)
        find_package(trainwatch 0.1 REQUIRED)
        add_executable(consumer consumer.c)
        target_link_libraries(consumer PRIVATE trainwatch::trainwatch)
    """))
    build = tmp_path / "project-build"
    prefix = installed / PREFIX.lstrip("/")
    for command in (["cmake", "-S", str(project), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}"],
                    ["cmake", "--build", str(build)]):
        p = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
    assert run_consumer(build / "consumer", installed, tmp_path) == "abi 1 open 0 enabled 1"


def test_serve_and_check_without_a_config_read_the_installed_path():
    """No --config: the file the package installs. Where it is missing the error names it."""
    if pathlib.Path("/etc/trainwatch/trainwatch.yaml").exists():
        pytest.skip("a trainwatch config is installed on this machine; test_package.py covers that case")
    for command in (["serve", "--listen", "127.0.0.1:0"], ["check"]):
        p = subprocess.run([str(BUILD / "src/cli/trainwatch"), *command], capture_output=True, text=True,
                           timeout=30)
        assert p.returncode != 0
        assert "/etc/trainwatch/trainwatch.yaml:0:0: file: cannot be read" in p.stderr, p.stderr


def test_an_install_prefix_keeps_every_file_under_it(tmp_path):
    """`cmake --install build --prefix P` puts everything under P, the units and the config
    included (they went to the configure-time /usr/local/... before). Under a DESTDIR, so
    that a file that escapes P lands in the temp dir, where the test finds it."""
    root, prefix = tmp_path / "root", "/opt/trainwatch"
    p = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", prefix],
                       env={**os.environ, "DESTDIR": str(root)}, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    installed = sorted(str(f.relative_to(root)) for f in root.rglob("*") if not f.is_dir())
    escaped = [f for f in installed if not f.startswith(prefix.lstrip("/") + "/")]
    assert installed and not escaped, f"installed outside {prefix}: {escaped}"
    for path in ("etc/trainwatch/trainwatch.yaml", "etc/trainwatch/agent/example.env",
                 "lib/systemd/system/trainwatch.service", "bin/trainwatch"):
        assert (root / prefix.lstrip("/") / path).exists(), path
