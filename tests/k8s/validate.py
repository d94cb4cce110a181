#!/usr/bin/env python3
"""Validates Kubernetes manifests against the real schemas, strictly.

Usage: validate.py KUBERNETES_VERSION FILE...

- Core kinds (ConfigMap, Deployment, Service, ...) go through the
  `kubernetes-validate` package's OpenAPI schemas for KUBERNETES_VERSION, in
  strict mode (unknown fields are errors, as `kubectl apply --validate=strict`).
- LeaderWorkerSet goes through the CRD's OpenAPI v3 schema
  (`leaderworkerset.x-k8s.io_v1.schema.json` beside this file; its source is in
  README.md there), made strict the way the API server's strict field
  validation is: an object schema with `properties` rejects other fields, and
  `x-kubernetes-list-type: set` lists must hold unique items. Each of its pod
  templates is also validated as a core `PodTemplate`.

Prints one line per error (file, object, field path, message) and exits 1 on
any error; exits 0 only when every document of every file passed.
"""

import copy
import json
import os
import sys

import jsonschema
import kubernetes_validate
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
LWS_SCHEMA = os.path.join(HERE, "leaderworkerset.x-k8s.io_v1.schema.json")


def strict(schema):
    """The schema with unknown fields rejected (see the module docstring)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties"):
            out[key] = {k: strict(v) for k, v in value.items()}
        elif key in ("enum", "default", "required"):
            out[key] = copy.deepcopy(value)
        else:
            out[key] = strict(value)
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if out.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    return out


def lws_validator():
    with open(LWS_SCHEMA) as f:
        schema = strict(json.load(f))
    # OpenAPI v3.0 schemas are JSON Schema draft 4 with extensions.
    return jsonschema.Draft4Validator(schema)


def name_of(doc):
    meta = doc.get("metadata") or {}
    return "%s/%s" % (doc.get("kind"), meta.get("name"))


def validate_doc(doc, version, lws, errors, where):
    kind = doc.get("kind")
    if kind == "LeaderWorkerSet":
        for e in sorted(lws.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            path = ".".join(str(p) for p in e.absolute_path) or "(root)"
            errors.append("%s: %s: %s: %s" % (where, name_of(doc), path, e.message))
        template = (doc.get("spec") or {}).get("leaderWorkerTemplate") or {}
        for key in ("leaderTemplate", "workerTemplate"):
            if key in template:
                pod_template = {
                    "apiVersion": "v1",
                    "kind": "PodTemplate",
                    "metadata": {"name": "%s-%s" % ((doc.get("metadata") or {}).get("name"), key.lower())},
                    "template": template[key],
                }
                validate_doc(pod_template, version, lws, errors, "%s: %s: spec.leaderWorkerTemplate.%s" % (where, name_of(doc), key))
        return
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.path) or "(root)"
        errors.append("%s: %s: %s: %s" % (where, name_of(doc), path, e.message))
    except kubernetes_validate.SchemaNotFoundError as e:
        errors.append("%s: %s: no schema for this kind and apiVersion: %s" % (where, name_of(doc), e))


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: validate.py KUBERNETES_VERSION FILE...")
    version = argv[1]
    lws = lws_validator()
    errors = []
    count = 0
    for filename in argv[2:]:
        with open(filename) as f:
            try:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as e:
                errors.append("%s: not YAML: %s" % (filename, e))
                continue
        if not docs:
            errors.append("%s: no document" % filename)
        for doc in docs:
            if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                errors.append("%s: a document without `kind` and `apiVersion`" % filename)
                continue
            count += 1
            validate_doc(doc, version, lws, errors, filename)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print("%d error(s) in %d object(s)" % (len(errors), count), file=sys.stderr)
        return 1
    print("%d object(s) valid against Kubernetes %s and LeaderWorkerSet v1" % (count, version))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
