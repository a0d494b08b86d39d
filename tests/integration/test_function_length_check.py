"""scripts/check_function_length.py keeps every function in src/ under 80 lines."""
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_function_length.py"


def check(*dirs):
    return subprocess.run(["/usr/bin/python3", str(SCRIPT), *map(str, dirs)], capture_output=True, text=True,
                          timeout=60)


def test_every_function_in_src_is_80_lines_or_fewer():
    result = check(ROOT / "src")
    assert result.returncode == 0, result.stderr


def test_a_long_function_is_named_with_its_line_and_length(tmp_path):
    body = "".join(f"  total += {i};\n" for i in range(85))
    (tmp_path / "long.cc").write_text("namespace x {\n\nint sum(int total) {\n" + body + "  return total;\n}\n\n}\n")
    result = check(tmp_path)
    assert result.returncode == 1
    assert "long.cc:3: 88 lines, over 80: int sum(int total) {" in result.stderr, result.stderr


def test_braces_in_strings_and_comments_and_a_long_class_do_not_count(tmp_path):
    text = 'int f() {\n  const char* s = "{{{{";  // }}}} {\n  /* {\n  { */\n  return s[0];\n}\n'
    text += "struct Big {\n" + "".join(f"  int field_{i} = {i};\n" for i in range(100)) + "};\n"
    (tmp_path / "short.cc").write_text(text)
    result = check(tmp_path)
    assert result.returncode == 0, result.stderr
