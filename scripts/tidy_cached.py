#!/usr/bin/python3
"""Runs clang-tidy over the translation units of a compile database, skipping every unit
whose exact input was already found clean: scripts/tidy_cached.py DB ROOT [REGEX...]

A unit's key is the hash of what clang-tidy would read: its preprocessed text (so every
header it includes counts), its compile flags, .clang-tidy and clang-tidy's version, with
the checkout's own path taken out so that any clone hits the same entries. A clean unit
leaves an empty file named by its key under $TRAINWATCH_TIDY_CACHE (default
~/.cache/trainwatch-tidy); a unit with findings leaves nothing and is checked again next
time. Units are checked $TIDY_JOBS (2) at a time. Prints each finding once; exits 1 on any.
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

TIDY = "clang-tidy-15"
FINDING = re.compile(r"^/[^ ]+:\d+:\d+: (error|warning):")


def preprocess_command(entry):
    args = shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        out.append(a)
    return out + ["-E", "-P"]


def key_of(entry, root, salt):
    text = subprocess.run(preprocess_command(entry), cwd=entry["directory"], capture_output=True, check=True).stdout
    flags = " ".join(a for a in preprocess_command(entry) if a.startswith(("-D", "-std", "-f")))
    h = hashlib.sha256(salt)
    h.update(flags.encode())
    h.update(text.replace(root.encode(), b"@ROOT@"))
    h.update(entry["file"].replace(root, "@ROOT@").encode())
    return h.hexdigest()


def main():
    db_dir, root, patterns = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3:] or ["."]
    cache = os.environ.get("TRAINWATCH_TIDY_CACHE", os.path.expanduser("~/.cache/trainwatch-tidy"))
    os.makedirs(cache, exist_ok=True)
    version = subprocess.run([TIDY, "--version"], capture_output=True, text=True).stdout
    salt = (version + open(os.path.join(root, ".clang-tidy")).read()).encode()
    entries = [e for e in json.load(open(os.path.join(db_dir, "compile_commands.json")))
               if any(re.search(p, e["file"]) for p in patterns)]

    def check(entry):
        try:
            key = key_of(entry, root, salt)
        except subprocess.CalledProcessError as e:
            return entry["file"], False, [f"{entry['file']}: preprocessing failed: {e.stderr.decode()[-500:]}"]
        marker = os.path.join(cache, key)
        if os.path.exists(marker):
            return entry["file"], True, []
        run = subprocess.run([TIDY, "-p", db_dir, "--quiet", entry["file"]], capture_output=True, text=True)
        lines = [l.replace(root + "/", "") for l in run.stdout.splitlines() if FINDING.match(l)]
        if run.returncode == 0 and not lines:
            open(marker, "w").close()
            return entry["file"], False, []
        return entry["file"], False, lines or [f"{entry['file']}: clang-tidy exited {run.returncode}: "
                                               f"{(run.stdout + run.stderr)[-500:]}"]

    findings, cached = set(), 0
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("TIDY_JOBS", "2"))) as pool:
        for _, hit, lines in pool.map(check, entries):
            cached += hit
            findings.update(lines)
    for line in sorted(findings):
        print(line, file=sys.stderr)
    print(f"tidy: {len(entries)} units, {cached} unchanged since found clean, "
          f"{len(findings)} findings", file=sys.stderr if findings else sys.stdout)
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
