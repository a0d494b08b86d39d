"""The architecture map (docs/architecture.md) is held to the code by
scripts/check_docs_map.py: every file and symbol it names must exist."""
import pathlib
import shutil
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_docs_map.py"


def check(root):
    return subprocess.run(["/usr/bin/python3", str(SCRIPT), "--root", str(root), "docs/architecture.md",
                           "CONTRIBUTING.md"], capture_output=True, text=True, timeout=60)


def copy_of_the_tree(tmp_path, with_tests=True):
    """src/ and the docs copied, to rename things in; the rest of the checkout linked."""
    for part in ("src", "docs"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("node_modules"))
    shutil.copy(ROOT / "CONTRIBUTING.md", tmp_path)
    for part in ("include", "scripts", "examples", "fuzz", "bench", "python", "deploy", "debian", "cmake"):
        (tmp_path / part).symlink_to(ROOT / part)
    if with_tests:
        (tmp_path / "tests").symlink_to(ROOT / "tests")
    else:
        shutil.copytree(ROOT / "tests/fakes", tmp_path / "tests/fakes")
    return tmp_path


def test_the_map_names_only_files_and_symbols_that_exist():
    result = check(ROOT)
    assert result.returncode == 0, result.stderr


def test_renaming_a_file_the_map_names_fails_the_check_and_says_where(tmp_path):
    root = copy_of_the_tree(tmp_path)
    assert check(root).returncode == 0
    (root / "src/engine/schedule.h").rename(root / "src/engine/timetable.h")
    result = check(root)
    assert result.returncode == 1
    assert "no file `engine/schedule.h`" in result.stderr, result.stderr
    assert "docs/architecture.md:" in result.stderr


def test_renaming_a_symbol_the_map_names_fails_the_check(tmp_path):
    root = copy_of_the_tree(tmp_path, with_tests=False)  # the tests' own uses renamed too
    for source in (root / "src").rglob("*"):
        if source.suffix in (".h", ".cc"):
            text = source.read_text()
            if "ReportIntake" in text:
                source.write_text(text.replace("ReportIntake", "NodeReportIntake"))
    result = check(root)
    assert result.returncode == 1
    assert "no symbol `jobs::ReportIntake`" in result.stderr, result.stderr


LAYERS = ROOT / "scripts" / "check_layers.py"


def check_layers(root):
    return subprocess.run(["/usr/bin/python3", str(LAYERS), "--root", str(root)], capture_output=True, text=True,
                          timeout=60)


def test_every_component_links_only_to_the_rows_below_it():
    result = check_layers(ROOT)
    assert result.returncode == 0, result.stderr


def test_a_dependency_the_diagram_does_not_show_fails_the_check(tmp_path):
    root = copy_of_the_tree(tmp_path)
    assert check_layers(root).returncode == 0
    # The heartbeat rules reaching up into the engine: an edge the diagram forbids.
    cmake = root / "src/heartbeat/CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace("DEPS ", "DEPS trainwatch::engine ", 1))
    result = check_layers(root)
    assert result.returncode == 1
    assert "`heartbeat` depends on `engine`, in a row above it" in result.stderr, result.stderr


def test_a_component_missing_from_the_diagram_fails_the_check(tmp_path):
    root = copy_of_the_tree(tmp_path)
    (root / "src/probes").mkdir()
    (root / "src/probes/CMakeLists.txt").write_text("trainwatch_component(probes\n  SOURCES probes.cc\n"
                                                    "  DEPS trainwatch::core)\n")
    result = check_layers(root)
    assert result.returncode == 1
    assert "component `probes` is missing from the diagram" in result.stderr, result.stderr


def test_a_source_comment_naming_a_file_that_is_gone_fails_the_check(tmp_path):
    root = copy_of_the_tree(tmp_path)
    header = root / "src/net/http_connection.h"
    header.write_text(header.read_text().replace("(cluster/replica_peers.h)", "(cluster/peer_forwarder.h)"))
    result = subprocess.run(["/usr/bin/python3", str(SCRIPT), "--root", str(root), "--comments-in", "src",
                             "docs/architecture.md"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "src/net/http_connection.h:4: the comment names `cluster/peer_forwarder.h`" in result.stderr, result.stderr
