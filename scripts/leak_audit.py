#!/usr/bin/python3
"""Error-path leak audit: the clang static analyzer's unix.Malloc checker over onyx's sources,
with scripts/leak_audit_models.h modelling onyx's allocators (statuses, onyx_read_int_tensor,
values). Not part of CI (its default paths took ~35 minutes on a loaded 2-core machine); run
it after changing error paths and read every report: a leak on a path that returns an error
status is a real bug; a use-after-free right after a helper that frees on failure is usually
the model's simplification.

  scripts/leak_audit.py [PATH_PREFIX...]     (default: src/providers/cpu/kernels src/ir src/optimizer)

Configures build-leak-audit/ (compile_commands.json only, nothing is built), analyses each .c
file whose path starts with a prefix (2 at a time, niced) and prints the warnings; exits 1 when
there are any."""
import json, os, shlex, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.join(root, "build-leak-audit")
models = os.path.join(root, "scripts", "leak_audit_models.h")
prefixes = sys.argv[1:] or ["src/providers/cpu/kernels", "src/ir", "src/optimizer"]
subprocess.run(["cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_C_COMPILER=clang",
                "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], check=True, stdout=subprocess.DEVNULL)
jobs, seen = [], set()
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    rel = os.path.relpath(e["file"], root)
    if rel in seen or not rel.endswith(".c") or not any(rel.startswith(p) for p in prefixes):
        continue
    seen.add(rel)
    args = shlex.split(e["command"])[1:]
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            keep.append(a)
    jobs.append((rel, e["directory"], ["nice", "-n", "15", "clang", "--analyze", "-include", models,
                                      "-Xanalyzer", "-analyzer-output=text", "-Xanalyzer",
                                      "-analyzer-disable-checker=core,deadcode,security,nullability",
                                      "-o", "/dev/null"] + keep))


def analyse(job):
    rel, cwd, cmd = job
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    # unix.cstring stays enabled (disabling it also hides unix.Malloc leaks); its NullArg
    # reports (memcpy of 0 bytes from NULL) are not this audit's subject
    return rel, [l for l in r.stderr.splitlines()
                 if ": warning: " in l and "Path diagnostic" not in l and "[unix.cstring" not in l]


found = 0
with ThreadPoolExecutor(2) as ex:
    for rel, warnings in ex.map(analyse, jobs):
        for w in warnings:
            print(w, flush=True)
        found += len(warnings)
print(f"leak audit: {len(jobs)} files, {found} warnings")
sys.exit(1 if found else 0)
