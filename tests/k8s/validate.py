#!/usr/bin/env python3
"""Validates Kubernetes manifests against the real schemas, strictly.

Usage: validate.py KUBERNETES_VERSION FILE...

- Core kinds (ConfigMap, Deployment, Service, ...) go through the
  `kubernetes-validate` package's OpenAPI schemas for KUBERNETES_VERSION, in
  strict mode (unknown fields are errors, as `kubectl apply --validate=strict`).
- The custom resources of `CRDS` below (LeaderWorkerSet, DisaggregatedSet,
  InferencePool, HTTPRoute, ScaledObject, PodGroup) go through their CRD's
  OpenAPI v3 schema (the `*.schema.json` files beside this file; their sources
  are in README.md there), made strict the way the API server's strict field
  validation is: an object schema with `properties` rejects other fields
  (unless it has `additionalProperties` or `x-kubernetes-preserve-unknown-fields`),
  `x-kubernetes-list-type: set` lists must hold unique items and
  `x-kubernetes-list-type: map` lists unique `x-kubernetes-list-map-keys`. The
  object's `metadata` is validated as a core ObjectMeta, and each pod template
  embedded in it (LeaderWorkerSet's, each DisaggregatedSet role's) as a core
  `PodTemplate`. CEL rules (`x-kubernetes-validations`) are not evaluated.
- Any other apiVersion and kind is an error.

A `v1` `List` document is checked item by item.

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

LWS_TEMPLATES = ("leaderTemplate", "workerTemplate")


def lws_pod_templates(doc, name):
    """(field path, PodTemplate name, template) of a LeaderWorkerSet."""
    template = (doc.get("spec") or {}).get("leaderWorkerTemplate") or {}
    if not isinstance(template, dict):
        return []
    return [
        ("spec.leaderWorkerTemplate.%s" % key, "%s-%s" % (name, key.lower()), template[key])
        for key in LWS_TEMPLATES
        if key in template
    ]


def disaggregatedset_pod_templates(doc, name):
    """(field path, PodTemplate name, template) of each DisaggregatedSet role."""
    roles = (doc.get("spec") or {}).get("roles") or []
    out = []
    for i, role in enumerate(roles if isinstance(roles, list) else []):
        if not isinstance(role, dict):
            continue
        template = (role.get("spec") or {}).get("leaderWorkerTemplate") or {}
        if not isinstance(template, dict):
            continue
        for key in LWS_TEMPLATES:
            if key in template:
                out.append((
                    "spec.roles.%d.spec.leaderWorkerTemplate.%s" % (i, key),
                    "%s-%s-%s" % (name, role.get("name"), key.lower()),
                    template[key],
                ))
    return out


# (apiVersion, kind) -> (schema file beside this one, its embedded pod templates).
CRDS = {
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): (
        "leaderworkerset.x-k8s.io_v1.schema.json",
        lws_pod_templates,
    ),
    ("disaggregatedset.x-k8s.io/v1", "DisaggregatedSet"): (
        "disaggregatedsets.disaggregatedset.x-k8s.io_v1.schema.json",
        disaggregatedset_pod_templates,
    ),
    ("inference.networking.k8s.io/v1", "InferencePool"): (
        "inferencepools.inference.networking.k8s.io_v1.schema.json",
        None,
    ),
    ("gateway.networking.k8s.io/v1", "HTTPRoute"): (
        "httproutes.gateway.networking.k8s.io_v1.schema.json",
        None,
    ),
    ("keda.sh/v1alpha1", "ScaledObject"): (
        "scaledobjects.keda.sh_v1alpha1.schema.json",
        None,
    ),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): (
        "podgroups.scheduling.volcano.sh_v1beta1.schema.json",
        None,
    ),
}


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
        elif key in ("enum", "default", "required", "x-kubernetes-list-map-keys"):
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


def list_map_keys(validator, keys, instance, schema):
    """`x-kubernetes-list-type: map`: no two items with the same keys (a
    missing key takes its schema default, as the API server defaults first)."""
    if schema.get("x-kubernetes-list-type") != "map" or not validator.is_type(instance, "array"):
        return
    item_props = (schema.get("items") or {}).get("properties") or {}
    seen = {}
    for i, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key = tuple(item.get(k, (item_props.get(k) or {}).get("default")) for k in keys)
        shown = json.dumps(dict(zip(keys, key)), sort_keys=True)
        if key in seen:
            yield jsonschema.ValidationError(
                "duplicate item %s (also item %d): the list is keyed by %s" % (shown, seen[key], ", ".join(keys)),
                path=(i,),
            )
        else:
            seen[key] = i


# OpenAPI v3.0 schemas are JSON Schema draft 4 with extensions.
CrdValidator = jsonschema.validators.extend(
    jsonschema.Draft4Validator, {"x-kubernetes-list-map-keys": list_map_keys}
)

_validators = {}


def crd_validator(filename):
    if filename not in _validators:
        with open(os.path.join(HERE, filename)) as f:
            _validators[filename] = CrdValidator(strict(json.load(f)))
    return _validators[filename]


def name_of(doc):
    meta = doc.get("metadata") or {}
    return "%s/%s" % (doc.get("kind"), meta.get("name"))


def error_order(error):
    """Sorts errors by field path (indexes numerically, before names)."""
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]


def message_of(error):
    """jsonschema's message, without the whole list for a length error."""
    if error.validator in ("minItems", "maxItems") and isinstance(error.instance, list):
        return "%d item(s), %s %d (%s)" % (
            len(error.instance),
            "at least" if error.validator == "minItems" else "at most",
            error.validator_value,
            error.validator,
        )
    return error.message


def core_doc(doc, version, errors, where, label):
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.path) or "(root)"
        errors.append("%s: %s: %s: %s" % (where, label, path, e.message))
    except kubernetes_validate.SchemaNotFoundError as e:
        errors.append("%s: %s: no schema for this kind and apiVersion: %s" % (where, label, getattr(e, "message", e)))


def validate_doc(doc, version, errors, where, seen):
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    crd = CRDS.get((api_version, kind))
    if crd is not None:
        filename, pod_templates = crd
        seen.add((kind, api_version.split("/")[-1]))
        for e in sorted(crd_validator(filename).iter_errors(doc), key=error_order):
            path = ".".join(str(p) for p in e.absolute_path) or "(root)"
            errors.append("%s: %s: %s: %s" % (where, name_of(doc), path, message_of(e)))
        # The API server checks a custom resource's metadata as an ObjectMeta.
        if isinstance(doc.get("metadata"), dict):
            meta = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": doc["metadata"]}
            core_doc(meta, version, errors, where, name_of(doc))
        name = (doc.get("metadata") or {}).get("name")
        for field, pod_name, template in pod_templates(doc, name) if pod_templates else []:
            pod_template = {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": pod_name},
                "template": template,
            }
            validate_doc(pod_template, version, errors, "%s: %s: %s" % (where, name_of(doc), field), seen)
        return
    # kubernetes-validate looks schemas up by the group's first label only
    # (`apps.example.com/v1` would pass as `apps/v1`): a group with a dot is a
    # core one only under k8s.io.
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    if "." in group and not group.endswith(".k8s.io"):
        errors.append(
            "%s: %s: no schema for this kind and apiVersion: %s %s is neither a core kind nor one of validate.py's CRDs"
            % (where, name_of(doc), api_version, kind)
        )
        return
    core_doc(doc, version, errors, where, name_of(doc))


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: validate.py KUBERNETES_VERSION FILE...")
    version = argv[1]
    errors = []
    seen = set()
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
        # A `v1` `List` (what `kubectl get -o yaml` writes, and kubectl and
        # kustomize apply) holds its objects under `items`: each is checked.
        expanded = []
        for doc in docs:
            if isinstance(doc, dict) and doc.get("apiVersion") == "v1" and doc.get("kind") == "List":
                extra = sorted(set(doc) - {"apiVersion", "kind", "items", "metadata"})
                if extra or not isinstance(doc.get("items"), list) or not doc["items"]:
                    errors.append("%s: a v1 List with fields %s and items %r: expected a non-empty `items` list and nothing else" % (filename, extra, type(doc.get("items")).__name__))
                    continue
                expanded.extend(doc["items"])
            else:
                expanded.append(doc)
        for doc in expanded:
            if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                errors.append("%s: a document without `kind` and `apiVersion`" % filename)
                continue
            count += 1
            validate_doc(doc, version, errors, filename, seen)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print("%d error(s) in %d object(s)" % (len(errors), count), file=sys.stderr)
        return 1
    crds = "".join(" and %s %s" % k for k in sorted(seen))
    print("%d object(s) valid against Kubernetes %s%s" % (count, version, crds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
