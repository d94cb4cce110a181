//! The KV connector a node's `--kv-transfer-config` names: the PD connector,
//! a MultiConnector chaining `AscendStoreConnector`, and the KV pool.

use super::{Engine, Fail, KvIn, NodeIn, P, PoolIn, number, p};
use crate::Spanned;
use crate::import::{Loc, Note};
use crate::spec::{ConnectorKind, Json, PoolSpec, Role};
use std::collections::BTreeMap;

pub(super) fn kv_of(n: &NodeIn) -> Result<Option<KvIn>, Fail> {
    let Some(arg) = n.args.iter().find(|a| a.flag.v == "--kv-transfer-config") else {
        return Ok(None);
    };
    let Some(v) = &arg.value else {
        return Err((
            arg.flag.at,
            "found `--kv-transfer-config` without a value, expected a JSON object".into(),
        ));
    };
    let json: Json = serde_json::from_str(&v.v).map_err(|e| {
        (
            v.at,
            format!(
                "found a `--kv-transfer-config` that is not JSON ({e}), expected a JSON object"
            ),
        )
    })?;
    kv_of_json(n, &json, v)
}

/// [`kv_of`] on the parsed JSON (a MultiConnector's PD child too).
fn kv_of_json(n: &NodeIn, json: &Json, v: &P<String>) -> Result<Option<KvIn>, Fail> {
    let Json::Object(obj) = json else {
        return Err((
            v.at,
            "found a `--kv-transfer-config` that is not a JSON object, expected `{\"kv_connector\": ..}`".into(),
        ));
    };
    let name = obj
        .get("kv_connector")
        .and_then(Json::as_str)
        .unwrap_or_default();
    let Some(kind) = ConnectorKind::from_kv_connector(name) else {
        let known: Vec<&str> = ConnectorKind::ALL
            .iter()
            .map(|k| k.kv_connector())
            .collect();
        // vLLM's MultiConnector chains connectors: upstream's KV-pool runs
        // chain a Mooncake PD connector and `AscendStoreConnector`.
        if name == crate::spec::MULTI_CONNECTOR {
            return multi_connector(n, obj, v);
        }
        return Err((
            v.at,
            format!(
                "found `kv_connector` `{name}`, expected one of `{}`{}",
                known.join("`, `"),
                crate::rules::did_you_mean(name, known.iter().copied())
            ),
        ));
    };
    let want_role = n.role.kv_role();
    let role = obj.get("kv_role").and_then(Json::as_str);
    if role.is_some() && role != want_role {
        return Err((
            v.at,
            format!(
                "found `kv_role` `{}` on a {} node, expected `{}`: the routing and the connector disagree about the node's role",
                role.unwrap_or_default(),
                n.role,
                want_role.unwrap_or("none")
            ),
        ));
    }
    let num = |key: &str| -> Result<Option<P<u64>>, Fail> {
        match obj.get(key) {
            None => Ok(None),
            Some(Json::Number(x)) => x.as_u64().map(|x| Some(p(x, v.at))).ok_or((
                v.at,
                format!("found `{key}` = {x}, expected a whole number"),
            )),
            Some(Json::String(x)) => number(&p(x.clone(), v.at), &format!("`{key}`")).map(Some),
            Some(other) => Err((
                v.at,
                format!("found `{key}` = {other}, expected a number or a numeric string"),
            )),
        }
    };
    let port = num("kv_port")?;
    let engine_id = num("engine_id")?;
    let dropped: Vec<(String, Json)> = obj
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "kv_connector" | "kv_role" | "kv_port" | "engine_id" | "kv_connector_extra_config"
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut extra = BTreeMap::new();
    let mut shapes = BTreeMap::new();
    if let Some(Json::Object(x)) = obj.get("kv_connector_extra_config") {
        for (k, val) in x {
            if k == "prefill" || k == "decode" {
                shapes.insert(k.clone(), (p(val.clone(), v.at), v.at));
            } else {
                extra.insert(k.clone(), p(val.clone(), v.at));
            }
        }
    }
    Ok(Some(KvIn {
        kind: p(kind, v.at),
        port,
        engine_id,
        extra,
        shapes,
        dropped,
        store: None,
    }))
}

/// The KV pool: `kv_pool:`'s service with the `AscendStoreConnector` every
/// engine chains after its PD connector (its extra config the same on
/// every engine of a role; what both roles share is `extra`).
pub(super) fn pool_of(
    pool_in: Option<PoolIn>,
    notes: &mut Vec<Note>,
    engines: &[Engine],
    order: &[usize],
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> Result<Option<PoolSpec>, Fail> {
    let mut by_role: BTreeMap<Role, P<serde_json::Map<String, Json>>> = BTreeMap::new();
    let mut without: Option<Loc> = None;
    let mut with: Option<Loc> = None;
    for &ei in order {
        let e = &engines[ei];
        let Some(kv) = &e.kv else { continue };
        let Some(store) = &kv.store else {
            without.get_or_insert(kv.kind.at);
            continue;
        };
        with.get_or_insert(store.at);
        match by_role.get(&e.role) {
            Some(prev) if prev.v != store.v => {
                return Err((
                    store.at,
                    format!(
                        "found `AscendStoreConnector` extra config {} here and {} on another {} engine, expected one per role: pd-dsl states the pool's settings per role",
                        Json::Object(store.v.clone()),
                        Json::Object(prev.v.clone()),
                        e.role
                    ),
                ));
            }
            Some(_) => {}
            None => {
                by_role.insert(e.role, store.clone());
            }
        }
    }
    let (Some(_), Some(pool_in)) = (with, pool_in.clone()) else {
        if let Some(at) = with {
            return Err((
                at,
                "found `AscendStoreConnector` in a MultiConnector without a `kv_pool:` service, expected `kv_pool: { type: .., ports, config }`: the store connector reaches the pool's service on node 0".into(),
            ));
        }
        if let Some(pool) = pool_in {
            notes.push(Note {
                at: pool.at,
                what: format!("`kv_pool` ({}) dropped", pool.backend.v),
                why: "no engine chains `AscendStoreConnector` after its PD connector: nothing uses the pool".into(),
            });
        }
        return Ok(None);
    };
    if let Some(at) = without {
        return Err((
            at,
            "found a PD connector without the KV pool's `AscendStoreConnector` here and a MultiConnector with it on another engine, expected one on every engine: pd-dsl states one pool for the deployment".into(),
        ));
    }
    let backend = pool_in.backend.v;
    for store in by_role.values() {
        // AscendStoreConnector's default (pool_scheduler.py
        // `extra_config.get("backend", "mooncake")`).
        let named = store
            .v
            .get("backend")
            .and_then(Json::as_str)
            .unwrap_or("mooncake");
        if !named.eq_ignore_ascii_case(backend.as_str()) {
            return Err((
                store.at,
                format!(
                    "found `AscendStoreConnector` backend `{named}` with a `kv_pool` of type `{backend}`, expected the same store: the connector would look for a service that does not run"
                ),
            ));
        }
        if store.v.get("backend").is_none() {
            notes.push(Note {
                at: store.at,
                what: "`AscendStoreConnector` without `backend` (its default `mooncake`)".into(),
                why: "pd-dsl writes the pool's backend on every engine".into(),
            });
        }
    }
    let empty = serde_json::Map::new();
    let pf = by_role.get(&Role::Prefill).map_or(&empty, |x| &x.v);
    let dc = by_role.get(&Role::Decode).map_or(&empty, |x| &x.v);
    let at_of = |r: Role| by_role.get(&r).map_or(pool_in.at, |x| x.at);
    let (pf_at, dc_at) = (at_of(Role::Prefill), at_of(Role::Decode));
    let mut extra = BTreeMap::new();
    let mut prefill = BTreeMap::new();
    let mut decode = BTreeMap::new();
    for (k, v) in pf {
        if k == "backend" {
            continue;
        }
        if dc.get(k) == Some(v) {
            extra.insert(k.clone(), Spanned::new(v.clone(), s(pf_at)));
        } else {
            prefill.insert(k.clone(), Spanned::new(v.clone(), s(pf_at)));
        }
    }
    for (k, v) in dc {
        if k != "backend" && pf.get(k) != Some(v) {
            decode.insert(k.clone(), Spanned::new(v.clone(), s(dc_at)));
        }
    }
    let ports = pool_in
        .ports
        .iter()
        .map(|(n, v)| (n.clone(), Spanned::new(v.v, s(v.at))))
        .collect();
    let config = pool_in
        .config
        .iter()
        .map(|(k, v)| (k.clone(), Spanned::new(v.v.clone(), s(v.at))))
        .collect();
    let backend_site = s(pool_in.backend.at);
    Ok(Some(PoolSpec {
        backend: Spanned::new(backend, backend_site),
        ports,
        config,
        extra,
        prefill,
        decode,
        site: backend_site,
    }))
}

/// A MultiConnector of a PD connector then `AscendStoreConnector`, each with
/// the node's `kv_role`: the PD connector as [`kv_of`] reads it, with the
/// store's extra config.
fn multi_connector(
    n: &NodeIn,
    obj: &serde_json::Map<String, Json>,
    v: &P<String>,
) -> Result<Option<KvIn>, Fail> {
    let children: Vec<&Json> = obj
        .get("kv_connector_extra_config")
        .and_then(|x| x.get("connectors"))
        .and_then(Json::as_array)
        .map(|cs| cs.iter().collect())
        .unwrap_or_default();
    let names: Vec<&str> = children
        .iter()
        .map(|c| c.get("kv_connector").and_then(Json::as_str).unwrap_or(""))
        .collect();
    let pd_names: Vec<&str> = ConnectorKind::ALL
        .iter()
        .map(|k| k.kv_connector())
        .collect();
    let shape_ok = names.len() == 2
        && pd_names.contains(&names[0])
        && names[1] == crate::spec::STORE_CONNECTOR;
    if !shape_ok {
        return Err((
            v.at,
            format!(
                "found `kv_connector` `MultiConnector` chaining {}, expected a PD connector (`{}`) then `AscendStoreConnector`: that is the KV pool a pd-dsl layout states (`connector: .. {{ pool: .. }}`)",
                if names.is_empty() {
                    "no connectors".to_owned()
                } else {
                    format!("`{}`", names.join("`, `"))
                },
                pd_names.join("` | `")
            ),
        ));
    }
    let want = n.role.kv_role();
    for (what, c) in [
        ("`MultiConnector`", &Json::Object(obj.clone())),
        ("its PD connector", children[0]),
        ("`AscendStoreConnector`", children[1]),
    ] {
        let role = c.get("kv_role").and_then(Json::as_str);
        if role != want {
            return Err((
                v.at,
                format!(
                    "found `kv_role` {} on {what} of a {} node, expected `{}`: every connector of the chain plays the node's role",
                    role.map_or("missing".to_owned(), |r| format!("`{r}`")),
                    n.role,
                    want.unwrap_or("none")
                ),
            ));
        }
    }
    let extra_keys: Vec<&String> = obj
        .keys()
        .filter(|k| {
            !matches!(
                k.as_str(),
                "kv_connector" | "kv_role" | "kv_connector_extra_config"
            )
        })
        .collect();
    if let Some(k) = extra_keys.first() {
        return Err((
            v.at,
            format!(
                "found `{k}` on the `MultiConnector` itself, expected only `kv_connector`, `kv_role` and its `connectors`: pd-dsl puts each connector's settings on that connector"
            ),
        ));
    }
    let store = children[1];
    let unknown: Vec<&String> = store
        .as_object()
        .map(|m| {
            m.keys()
                .filter(|k| {
                    !matches!(
                        k.as_str(),
                        "kv_connector" | "kv_role" | "kv_connector_extra_config"
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(k) = unknown.first() {
        return Err((
            v.at,
            format!(
                "found `{k}` on `AscendStoreConnector`, expected only `kv_connector`, `kv_role` and `kv_connector_extra_config`: pd-dsl renders those"
            ),
        ));
    }
    let extra = match store.get("kv_connector_extra_config") {
        None => serde_json::Map::new(),
        Some(Json::Object(m)) => m.clone(),
        Some(other) => {
            return Err((
                v.at,
                format!(
                    "found `AscendStoreConnector`'s `kv_connector_extra_config` = {other}, expected a JSON object"
                ),
            ));
        }
    };
    let inner = P {
        v: children[0].to_string(),
        at: v.at,
    };
    let mut kv = kv_of_json(n, children[0], &inner)?;
    if let Some(kv) = &mut kv {
        kv.store = Some(p(extra, v.at));
    }
    Ok(kv)
}
