#!/usr/bin/env python3
"""Kubernetes JSON schemas for kubeconform, offline.

The PyPI package kubernetes-validate bundles the schemas of many Kubernetes versions, but each
kind's file refers to definitions by a URL (https://kubernetes.io/api/_definitions.json) that
kubeconform would fetch. This writes, for each version asked for, self-contained schemas in the
layout kubeconform reads with -schema-location:

    OUT/vX.Y.Z-standalone[-strict]/KIND[-GROUP]-VERSION.json

each carrying under $defs only the definitions it needs.

usage: k8s-schemas.py OUT_DIR X.Y.Z [X.Y.Z ...]     (run with the venv's python)
"""
import importlib.resources
import json
import os
import sys

MARK = "#/$defs/"


def local_refs(node, needed):
    """node with every definition reference made local (#/$defs/NAME); adds the names to needed."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and MARK in v:
                name = v.split(MARK, 1)[1]
                needed.add(name)
                out[k] = MARK + name
            else:
                out[k] = local_refs(v, needed)
        return out
    if isinstance(node, list):
        return [local_refs(x, needed) for x in node]
    return node


def convert(src, dst):
    os.makedirs(dst, exist_ok=True)
    defs = json.loads(src.joinpath("_definitions.json").read_text())["$defs"]
    made, uses = {}, {}
    for name, d in defs.items():
        uses[name] = set()
        made[name] = local_refs(d, uses[name])
    count = 0
    for f in src.iterdir():
        if not f.name.endswith(".json") or f.name in ("_definitions.json", "all.json"):
            continue
        needed = set()
        schema = local_refs(json.loads(f.read_text()), needed)
        closure, todo = set(), list(needed)
        while todo:
            x = todo.pop()
            if x not in closure:
                closure.add(x)
                todo.extend(uses.get(x, ()))
        schema.pop("$id", None)
        if closure:
            schema["$defs"] = {k: made[k] for k in sorted(closure)}
        with open(os.path.join(dst, f.name), "w") as out:
            json.dump(schema, out, separators=(",", ":"))
        count += 1
    return count


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    root = importlib.resources.files("kubernetes_validate").joinpath("kubernetes-json-schema")
    for version in sys.argv[2:]:
        version = version.lstrip("v")
        for strict in ("", "-strict"):
            src = root.joinpath(f"v{version}-local{strict}")
            if not src.is_dir():
                sys.exit(f"kubernetes-validate has no schemas for {version} ({src})")
            dst = os.path.join(out_dir, f"v{version}-standalone{strict}")
            print(f"{dst}: {convert(src, dst)} schemas")


main()
