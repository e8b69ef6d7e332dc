#!/usr/bin/env python3
"""Sources of a minimal build (CMake runs this; docs/build_options.md).

    minimal_build.py CONFIG SRC_ROOT OUT_DIR DESCRIPTION

CONFIG is an operator list in the spirit of ONNX Runtime's
required_operators.config (written by `onyx ops --required-by MODEL...`):

    # comment
    ai.onnx;13;Gemm,Mul,Relu          domain;opset;operators
    com.microsoft;1;FusedGemm
    passes;constant_folding,...        optimiser passes to keep (absent: all)
    types;float,int64                  element types the kernels run on (absent: all)
    features;local_functions           model features the models use (absent: all):
                                       external_data, local_functions, sparse_tensors

For every CPU kernel family source (a file that defines
`const onyx_op_def onyx_ops_<family>[]`) it writes OUT_DIR/kernels/<family>.c:
the same file with the table entries of operators outside the list removed,
so the compiler drops their compute and init functions; likewise for every
inference-rule family (`const onyx_schema_def onyx_schemas_<family>[]` under
src/ir/schemas/) into OUT_DIR/schemas/<family>.c. It also
writes, under OUT_DIR/gen/ (put before src/ on the include path of the files
that read them):
  optimizer/passes.h     the pass list, filtered
  providers/cpu/kernels/families.h  the families that kept an operator
  ir/schemas/families.h  the rule families that kept an operator
  ir/op_arity_table.h    the arity table, only the listed operators
  minimal_ops.h          ONYX_MINIMAL_KEEPS_<op> for each listed operator,
                         ONYX_MINIMAL_TYPES (the types line as ONYX_T bits)
                         (included by the family copies and the registry)
  minimal_left_out.h     DESCRIPTION (the build option that chose the list),
                         for the error
  platform_weak.h        without blocked-layout (ai.onyx.nchwc) operators: the
                         ISA convolution tiles as weak symbols, so their files
                         can be left out (printed as `DROP|FILE`); the layout
                         pass that would use them is left out with them;
                         without MatMulNBits its micro-kernel tables likewise
and prints the replaced sources as lines `ORIGINAL|GENERATED`, and the
common-core features that no kept kernel needs as lines `OMIT|FEATURE`
(minimal_build.cmake leaves out their sources, src/session/minimal_omitted.c
answers for them):
  subgraphs              no kept family runs graph attributes (If, Loop, Scan:
                         the families that include providers/cpu/subgraph.h)
  composite_values       no kept family takes or makes sequences, maps or
                         optionals, so callers cannot feed them either
  external_data,         the features line does not name them: no listed model
  local_functions,       has external data / model-local functions / sparse
  sparse_tensors         tensors

A table entry is kept when one of its operator names (its string literals,
or those of the macro it is written with) is in the list, whatever the
domain: keeping too much costs bytes, never correctness. An entry whose name
cannot be told is kept. A file whose table cannot be parsed is used as is.
Standard library only (runs with any python3).
"""
import os
import re
import sys

TABLE_RE = re.compile(r"^const onyx_op_def onyx_ops_(\w+)\[\]\s*=\s*\{", re.M)
# the inference rules' families (src/ir/schemas/*.c), filtered the same way
SCHEMA_TABLE_RE = re.compile(r"^const onyx_schema_def onyx_schemas_(\w+)\[\]\s*=\s*\{", re.M)
STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')
DEFINE_RE = re.compile(r"^#\s*define\s+(\w+)\s*\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", re.M)

# Kernels that look another one up at run time (kernels/contrib/contrib_matmul.c
# runs FusedGemm through Gemm's kernel).
RUNTIME_DEPENDENCIES = {"FusedGemm": ["Gemm"]}

# ONNX TensorProto.DataType numbers (onyx_element_type) of the types line's names
TYPE_NUMBERS = {name: i + 1 for i, name in enumerate(
    "float uint8 int8 uint16 int16 int32 int64 string bool float16 double uint32 uint64 complex64 complex128 "
    "bfloat16 float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz uint4 int4 float4e2m1 float8e8m0 uint2 "
    "int2".split())}


# What `onyx ops --required-by` reports on its features line.
MODEL_FEATURES = ("external_data", "local_functions", "sparse_tensors")


def parse_config(path):
    ops, domains, passes, types, model_features = set(), set(), None, None, None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split(";")]
            if parts[0] == "passes" and len(parts) == 2:
                passes = set(filter(None, (p.strip() for p in parts[1].split(","))))
                continue
            if parts[0] == "features" and len(parts) == 2:
                model_features = set(filter(None, (p.strip() for p in parts[1].split(","))))
                unknown = model_features - set(MODEL_FEATURES)
                if unknown:
                    sys.exit(f"{path}:{lineno}: unknown feature '{sorted(unknown)[0]}' (one of {', '.join(MODEL_FEATURES)})")
                continue
            if parts[0] == "types" and len(parts) == 2:
                types = 0
                for name in filter(None, (t.strip() for t in parts[1].split(","))):
                    if name not in TYPE_NUMBERS:
                        sys.exit(f"{path}:{lineno}: unknown element type '{name}' (one of {', '.join(TYPE_NUMBERS)})")
                    types |= 1 << TYPE_NUMBERS[name]
                continue
            if len(parts) != 3:
                sys.exit(f"{path}:{lineno}: expected 'domain;opset;Op1,Op2' or 'passes;a,b', got '{raw.strip()}'")
            ops.update(filter(None, (o.strip() for o in parts[2].split(","))))
            domains.add(parts[0])
    for op in list(ops):
        ops.update(RUNTIME_DEPENDENCIES.get(op, []))
    return ops, domains, passes, types, model_features


def skip_comment_or_string(text, i):
    """If text[i] starts a comment or literal, return the index after it, else None."""
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text[i] in "\"'":
        q, j = text[i], i + 1
        while j < len(text) and text[j] != q:
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return None


def split_table(text, start):
    """Entries of the initializer whose '{' is at text[start]: (items, end),
    items being (kind, text) with kind 'entry' or 'pp' (preprocessor line);
    end is the index of the closing '}'. None if unbalanced."""
    items, depth, i, cur = [], 0, start + 1, start + 1
    while i < len(text):
        nxt = skip_comment_or_string(text, i)
        if nxt is not None:
            i = nxt
            continue
        c = text[i]
        if c == "#" and depth == 0 and text[text.rfind("\n", 0, i) + 1:i].strip() == "":
            end = i
            while True:
                end = text.find("\n", end)
                if end < 0 or text[end - 1] != "\\":
                    break
                end += 1
            end = len(text) if end < 0 else end + 1
            if text[cur:i].strip():
                items.append(("entry", text[cur:i]))
            items.append(("pp", text[i:end]))
            i = cur = end
            continue
        if c in "({[":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                if text[cur:i].strip():
                    items.append(("entry", text[cur:i]))
                return items, i
            depth -= 1
        elif c == "," and depth == 0:
            items.append(("entry", text[cur:i + 1]))
            cur = i + 1
        i += 1
    return None


def strip_comments(s):
    out, i = [], 0
    while i < len(s):
        if s.startswith("/*", i) or s.startswith("//", i):
            i = skip_comment_or_string(s, i)
            out.append(" ")
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


def entry_names(entry, macros):
    """Candidate operator names of one table entry, or None for a terminator."""
    body = strip_comments(entry).strip().rstrip(",").strip()
    if re.fullmatch(r"\{\s*(0|NULL)?\s*(,\s*(0|NULL)\s*)*\}", body):
        return None
    names = set(STRING_RE.findall(body))
    m = re.match(r"(\w+)\s*\(", body)
    if m and m.group(1) in macros:
        names.update(STRING_RE.findall(macros[m.group(1)]))
    return {n for n in names if n and "." not in n}  # domains have dots, operator names never


def filter_family(path, ops, table_re=TABLE_RE):
    """(family, new_text, removed_names, entries_kept) or None when the table cannot be parsed."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = table_re.search(text)
    if not m:
        return None
    parsed = split_table(text, m.end() - 1)
    if parsed is None:
        return None
    items, end = parsed
    macros = {d.group(1): d.group(3) for d in DEFINE_RE.finditer(text)}
    kept, removed, n_kept = [], set(), 0
    for kind, item in items:
        if kind == "pp":
            kept.append(item)
            continue
        names = entry_names(item, macros)
        if names is None or not names or names & ops:
            kept.append(item)
            n_kept += names is not None
        else:
            removed |= names
            kept.append("\n" if "\n" in item else "")  # keeps '#' lines at a line start
    body = "".join(kept)
    # ONYX_MINIMAL_BUILD and gen/minimal_ops.h (ONYX_MINIMAL_KEEPS_<op> for
    # each listed operator) let a family drop helpers only its left-out
    # operators need
    new = ('#define ONYX_MINIMAL_BUILD 1\n#include "minimal_ops.h"\n' +
           f'#line 1 "{path}"\n' + text[:m.end()] + body + text[end:])
    return m.group(1), new, removed, n_kept


def filter_passes(path, passes):
    if passes is not None and not passes:
        passes = {"dead_node_elimination"}  # the pass table may not be empty; this one changes nothing here
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            pm = re.match(r"\s*ONYX_PASS\((\w+)\)", line)
            if pm and passes is not None and pm.group(1) not in passes:
                continue
            out.append(line)
    return "".join(out)


def filter_rows(path, ops):
    """A generated table header with only the rows {"domain", "Op", ...} of listed operators."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rm = re.match(r'\s*\{"[^"]*", "([^"]+)",', line)
            if rm and rm.group(1) not in ops:
                continue
            out.append(line)
    return f'#line 1 "{path}"\n' + "".join(out)


def weak_symbols(folder, file_pattern, symbol_pattern):
    """The files of `folder` whose names match file_pattern, and the symbols
    they define (symbol_pattern's group 1, one per line start)."""
    files, symbols = [], []
    for name in sorted(os.listdir(folder)):
        if not re.fullmatch(file_pattern, name):
            continue
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as f:
            found = re.findall(symbol_pattern, f.read(), re.M)
        if found:
            files.append(path)
            symbols += found
    return files, symbols


def weak_tiles(src_root):
    """The blocked-layout ISA tile files, and the tile symbols they define."""
    return weak_symbols(os.path.join(src_root, "src", "providers", "cpu", "kernels", "nchwc"),
                        r"nchwc_conv_\w+\.c", r"^void (onyx_nchwc_tile_\w+)\(")


def weak_nbits(src_root):
    """The MatMulNBits micro-kernel files (the dispatch table names them), and
    their tables: without MatMulNBits nothing reads the table's entry."""
    return weak_symbols(os.path.join(src_root, "src", "providers", "cpu", "kernels", "contrib"),
                        r"nbits_\w+\.c", r"^const onyx_nbits_isa (onyx_nbits_isa_\w+)\b")


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    config, src_root, out_dir = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    description = argv[4]
    ops, domains, passes, types, model_features = parse_config(config)
    if not ops:
        sys.exit(f"{config}: no operators listed")
    kernels_root = os.path.join(src_root, "src", "providers", "cpu", "kernels")
    empty = set()
    features = {"subgraphs": False, "composite_values": False}
    for name in MODEL_FEATURES:
        features[name] = model_features is None or name in model_features
    for dirpath, _, files in sorted(os.walk(kernels_root)):
        for name in sorted(files):
            if not name.endswith(".c"):
                continue
            path = os.path.join(dirpath, name)
            res = filter_family(path, ops)
            if res is None:
                continue
            family, text, removed, n_kept = res
            if not n_kept:
                empty.add(family)
            else:
                features["subgraphs"] |= '"providers/cpu/subgraph.h"' in text
                features["composite_values"] |= bool(re.search(r"\bONYX_VALUE_(SEQUENCE|MAP|OPTIONAL)\b", text))
            gen = os.path.join(out_dir, "kernels", family + ".c")
            write_if_changed(gen, text)
            print(f"{path}|{gen}")
    # the inference rules of left-out operators go with their kernels
    schemas_root = os.path.join(src_root, "src", "ir", "schemas")
    empty_schemas = set()
    for name in sorted(os.listdir(schemas_root)):
        path = os.path.join(schemas_root, name)
        res = filter_family(path, ops, SCHEMA_TABLE_RE) if name.endswith(".c") else None
        if res is None:
            continue
        if not res[3]:
            empty_schemas.add(res[0])  # left out of gen/ir/schemas/families.h
        gen = os.path.join(out_dir, "schemas", res[0] + ".c")
        write_if_changed(gen, res[1])
        print(f"{path}|{gen}")
    with open(os.path.join(schemas_root, "families.h"), encoding="utf-8") as f:
        kept_schemas = [line for line in f if not (re.match(r"ONYX_SCHEMA_FAMILY\((\w+)\)", line) and
                                                   re.match(r"ONYX_SCHEMA_FAMILY\((\w+)\)", line).group(1) in empty_schemas)]
    write_if_changed(os.path.join(out_dir, "gen", "ir", "schemas", "families.h"), "".join(kept_schemas))
    write_if_changed(os.path.join(out_dir, "gen", "optimizer", "passes.h"),
                     filter_passes(os.path.join(src_root, "src", "optimizer", "passes.h"), passes))
    families = os.path.join(src_root, "src", "providers", "cpu", "kernels", "families.h")
    with open(families, encoding="utf-8") as f:
        fam = [line for line in f
               if not (re.match(r"ONYX_FAMILY\((\w+)\)", line) and re.match(r"ONYX_FAMILY\((\w+)\)", line).group(1) in empty)]
    write_if_changed(os.path.join(out_dir, "gen", "providers", "cpu", "kernels", "families.h"), "".join(fam))
    arity = os.path.join(src_root, "src", "ir", "op_arity_table.h")
    write_if_changed(os.path.join(out_dir, "gen", "ir", "op_arity_table.h"), filter_rows(arity, ops))
    # the error names the build option; any operator without a kernel in the
    # build gets it (a list of the left-out names would cost kilobytes)
    c_description = description.replace("\\", "\\\\").replace('"', '\\"')
    lines = ["/* Generated by scripts/minimal_build.py: the option that chose the operators. */\n",
             f'#define ONYX_MINIMAL_DESCRIPTION "{c_description}"\n']
    write_if_changed(os.path.join(out_dir, "gen", "minimal_left_out.h"), "".join(lines))
    keeps = ["/* Generated by scripts/minimal_build.py: the listed operators. */\n"]
    keeps += [f"#define ONYX_MINIMAL_KEEPS_{op} 1\n" for op in sorted(ops) if re.fullmatch(r"\w+", op)]
    if types is not None:
        keeps.append(f"#define ONYX_MINIMAL_TYPES UINT64_C({types:#x})\n")
    write_if_changed(os.path.join(out_dir, "gen", "minimal_ops.h"), "".join(keeps))
    weak = ["/* Generated by scripts/minimal_build.py: force-included into platform.c. */\n"]
    if "ai.onyx.nchwc" not in domains:
        files, symbols = weak_tiles(src_root)
        weak += [f"#pragma weak {sym}\n" for sym in symbols]
        # the portable tile (kept in nchwc_conv.c) is never called either
        weak.append("#define ONYX_NCHWC_GENERIC_TILE NULL\n")
        for path in files:
            print(f"DROP|{path}")
    if "MatMulNBits" not in ops:
        files, symbols = weak_nbits(src_root)
        weak += [f"#pragma weak {sym}\n" for sym in symbols]
        for path in files:
            print(f"DROP|{path}")
    write_if_changed(os.path.join(out_dir, "gen", "platform_weak.h"), "".join(weak))
    for feature, needed in sorted(features.items()):
        if not needed:
            print(f"OMIT|{feature}")

if __name__ == "__main__":
    main(sys.argv)
