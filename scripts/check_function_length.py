#!/usr/bin/env python3
"""Fails when a function in src/ runs over 80 lines.

    scripts/check_function_length.py [--limit N] [DIR ...]     (default: src, limit 80)

A function longer than that is a list of steps that want names (CONTRIBUTING.md). The
count runs from the line that opens a definition's body to the line that closes it,
lambdas inside counted with their function; comments and string literals are blanked
first, so a brace inside them does not count. It reads the text, not the C++ grammar:
a definition is a line ending in `{` whose last few lines hold its `)`, and that is not a
control statement, a type, a namespace or a lambda.
"""
import argparse
import pathlib
import re
import sys

NOT_A_FUNCTION = re.compile(r"\s*(namespace|struct|class|union|enum|extern|if|for|while|switch|else|do|try|catch|return)\b")
LAMBDA_OR_INIT = re.compile(r"=\s*\[|\]\s*\(|\)\s*mutable|->\s*\S+\s*\{$|^\s*\[")


def blank_literals(text):
    """The text with comments and string/char literals emptied, line breaks kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i) + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
            continue
        raw = re.match(r'R"([^(\s]*)\(', text[i:i + 20])
        if raw:
            end = text.find(")" + raw.group(1) + '"', i) + len(raw.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        c = text[i]
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # not 1'000
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def long_functions(path, limit):
    lines = blank_literals(path.read_text()).split("\n")
    for i, line in enumerate(lines):
        opening = line.rstrip()
        head = " ".join(part.strip() for part in lines[max(0, i - 4):i + 1])
        if not opening.endswith("{") or ")" not in head or NOT_A_FUNCTION.match(opening):
            continue
        if LAMBDA_OR_INIT.search(opening) or "= " in opening.split("(")[0]:
            continue
        depth, j = 0, i
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            if depth <= 0:
                break
            j += 1
        if j - i + 1 > limit:
            yield i + 1, j - i + 1, opening.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("dirs", nargs="*", default=["src"])
    args = parser.parse_args()
    found = 0
    for d in args.dirs:
        for path in sorted(p for p in pathlib.Path(d).rglob("*") if p.suffix in (".cc", ".h")):
            if "node_modules" in path.parts:
                continue
            for line, length, text in long_functions(path, args.limit):
                print(f"{path}:{line}: {length} lines, over {args.limit}: {text[:80]}", file=sys.stderr)
                found += 1
    if found:
        print(f"{found} function(s) over {args.limit} lines: split each into named steps", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
