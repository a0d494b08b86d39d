#!/usr/bin/env python3
"""Checks that every file and symbol a map of the code names still exists.

    scripts/check_docs_map.py [--root DIR] [--comments-in DIR] [DOC ...]
                                                      (default: docs/architecture.md)

A map names things in backquotes. A name with a file extension (`engine/engine.h`,
`src/cli/server_app.cc`, `tests/fakes/manual_clock.h`) must be a file: from the root, or
from src/ (how the map names sources). A name that looks like code, `Engine::record_ping`,
`ReportIntake`, must appear as a word in src/, include/ or tests/. Anything else in
backquotes (config keys, commands, URLs) is left alone. Exits 1 and names each missing
thing with its line in the doc, so a rename that leaves the map behind fails the tests.
With --comments-in src, the comments of the C++ sources there are held to the same rule
for the paths they name (`// ... (cluster/replica_peers.h)`): a path with a folder must be
a file, from the root, src/, tests/ or include/, or beside the source.
"""
import argparse
import pathlib
import re
import sys

EXTENSIONS = (".h", ".cc", ".py", ".md", ".sh", ".txt", ".yaml", ".mustache", ".html", ".cmake")
CODE_DIRS = ("src", "include", "tests")
# PascalCase types and Type::member names; one lower-case word is too common to check.
SYMBOL = re.compile(r"^(?:[A-Z][A-Za-z0-9]+(?:::[A-Za-z_][A-Za-z0-9_]*)*|[a-z_]+::[A-Za-z_][A-Za-z0-9_:]*)$")


# Words about code, not in it.
NOT_CODE = {"PascalCase"}


def is_file_name(text):
    if any(c in text for c in "<>*{}"):
        return False  # a pattern (`fuzz/<name>_fuzzer.cc`), not one file
    return text.split(":")[0].endswith(EXTENSIONS) and " " not in text


def file_exists(root, text):
    path = text.split(":")[0]  # `engine.h:31` names a line of the file
    if "/" not in path:  # a bare name (`engine_commit.cc`, read beside its folder): anywhere
        if (root / path).is_file():
            return True
        return any(next((root / base).rglob(path), None) for base in ("src", "scripts", "tests", "docs", "bench"))
    return any((root / base / path).is_file() for base in ("", "src"))


class SourceWords:
    """Every identifier in the code, read once."""

    def __init__(self, root):
        self.text = []
        for base in CODE_DIRS:
            for p in (root / base).rglob("*"):
                if p.suffix in (".h", ".cc", ".py", ".c") and p.is_file():
                    self.text.append(p.read_text(errors="replace"))
        self.text = "\n".join(self.text)

    def has(self, symbol):
        # `Engine::record_ping` is written `Engine::record_ping(` where it is defined, or
        # declared as `record_ping(` inside class Engine: ask for both halves.
        parts = symbol.split("::")
        if not all(re.search(r"\b" + re.escape(p) + r"\b", self.text) for p in parts):
            return False
        if len(parts) == 2 and parts[0][0].isupper():
            return re.search(r"\b(class|struct|enum class|using)\s+" + re.escape(parts[0]) + r"\b", self.text) is not None
        return True


def problems_in(doc, root, words):
    found = []
    for number, line in enumerate(doc.read_text().splitlines(), start=1):
        for name in re.findall(r"`([^`]+)`", line):
            if is_file_name(name):
                if not file_exists(root, name):
                    found.append(f"{doc}:{number}: no file `{name}` (from the root or src/; a bare name anywhere)")
            elif SYMBOL.match(name) and name not in NOT_CODE and not words.has(name):
                found.append(f"{doc}:{number}: no symbol `{name}` in {', '.join(CODE_DIRS)}")
    return found


# A path with at least one folder, in a // comment: `storage/write_queue.h`, `bench/x/y.cc`.
COMMENT_PATH = re.compile(r"(?<![\w./-])((?:[a-z_0-9]+/)+[a-z_0-9.]+\.(?:h|cc|py|md|sh|yaml|mustache))\b")


def problems_in_comments(folder, root):
    found = []
    for source in sorted(folder.rglob("*")):
        if source.suffix not in (".h", ".cc") or not source.is_file():
            continue
        for number, line in enumerate(source.read_text(errors="replace").splitlines(), start=1):
            if "//" not in line:
                continue
            for path in COMMENT_PATH.findall(line[line.index("//"):]):
                bases = (root, root / "src", root / "tests", root / "include", source.parent)
                if not any((base / path).is_file() for base in bases):
                    found.append(f"{source.relative_to(root)}:{number}: the comment names `{path}`, which is no file")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path)
    parser.add_argument("--comments-in", action="append", default=[], help="a source folder whose comments to check")
    parser.add_argument("docs", nargs="*", default=["docs/architecture.md"])
    args = parser.parse_args()
    words = SourceWords(args.root)
    problems = []
    for folder in args.comments_in:
        problems += problems_in_comments(args.root / folder, args.root)
    for doc in args.docs:
        problems += problems_in(args.root / doc, args.root, words)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"{len(problems)} name(s) in the map no longer match the code", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
