//! The connector of a PD deployment and its engine ids: one connector kind,
//! each engine's `kv_port` and `engine_id`, the extra config every engine
//! shares (shapes compared to the topology's) and the KV pool.

use super::{Engine, Fail, NodeIn, P, PoolIn, p, pool_of};
use crate::Spanned;
use crate::import::{Loc, Note};
use crate::placement::derived_engine_id;
use crate::spec::{ConnectorKind, ConnectorSpec, EngineId, EngineIdsSpec, Json, KvPorts, Role};
use std::collections::BTreeMap;

/// The connector every engine's kv-transfer-config names (`first`: the
/// input's first node), where it is read and the engine ids where they
/// differ from the derived ones.
pub(super) fn connector_of(
    first: &NodeIn,
    nodes: &[NodeIn],
    notes: &mut Vec<Note>,
    pool_in: &mut Option<PoolIn>,
    engines: &[Engine],
    order: &[usize],
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> Result<(ConnectorSpec, Loc, Option<EngineIdsSpec>), Fail> {
    let mut kind: Option<P<ConnectorKind>> = None;
    let mut ports_by_role: BTreeMap<Role, Vec<Spanned<u64>>> = BTreeMap::new();
    let mut ids_by_role: BTreeMap<Role, Vec<EngineId>> = BTreeMap::new();
    let mut ids_differ = false;
    let mut extra: BTreeMap<String, Spanned<Json>> = BTreeMap::new();
    let mut role_index: BTreeMap<Role, usize> = BTreeMap::new();
    for &ei in order {
        let e = &engines[ei];
        let at = nodes[e.nodes[0]].at;
        let Some(kv) = &e.kv else {
            return Err((
                at,
                format!(
                    "found a {} engine without `--kv-transfer-config`, expected one on every engine of a PD deployment",
                    e.role
                ),
            ));
        };
        match &kind {
            None => kind = Some(kv.kind.clone()),
            Some(k) if k.v != kv.kind.v => {
                return Err((
                    kv.kind.at,
                    format!(
                        "found `{}` here and `{}` on another engine, expected one connector per deployment",
                        kv.kind.v.kv_connector(),
                        k.v.kv_connector()
                    ),
                ));
            }
            Some(_) => {}
        }
        let Some(port) = &kv.port else {
            return Err((
                kv.kind.at,
                "found a kv-transfer-config without `kv_port`, expected one: each engine's handshake span starts there".into(),
            ));
        };
        ports_by_role
            .entry(e.role)
            .or_default()
            .push(Spanned::new(port.v, s(port.at)));
        let ri = role_index.entry(e.role).or_insert(0);
        let derived = derived_engine_id(e.role, *ri);
        *ri += 1;
        let one = |x: &Option<P<u64>>, s: &mut dyn FnMut(Loc) -> crate::Site| match x {
            Some(id) => Spanned::new(id.v, s(id.at)),
            None => Spanned::new(derived.unwrap_or(0), s(at)),
        };
        let per_node = e
            .node_ids
            .iter()
            .any(|x| x.as_ref().map(|x| x.v) != e.node_ids[0].as_ref().map(|x| x.v));
        let id = if per_node {
            ids_differ = true;
            EngineId::PerNode(e.node_ids.iter().map(|x| one(x, s)).collect())
        } else {
            if kv
                .engine_id
                .as_ref()
                .is_some_and(|id| Some(id.v) != derived)
            {
                ids_differ = true;
            }
            EngineId::One(one(&kv.engine_id, s))
        };
        ids_by_role.entry(e.role).or_default().push(id);
        for (k, v) in &kv.extra {
            match extra.get(k) {
                Some(prev) if prev.value != v.v => {
                    return Err((
                        v.at,
                        format!(
                            "found `kv_connector_extra_config.{k}` = {} here and {} on another engine, expected one value: the extra config is identical on every engine",
                            v.v, prev.value
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    extra.insert(k.clone(), Spanned::new(v.v.clone(), s(v.at)));
                }
            }
        }
        // The prefill/decode shapes are derived: compare.
        for (shape_role, (shape, key_at)) in &kv.shapes {
            let want = engines
                .iter()
                .find(|x| x.role.as_str() == shape_role)
                .map(|x| serde_json::json!({ "dp_size": x.dp.v, "tp_size": x.tp.v }));
            let same = want.as_ref().is_some_and(|w| {
                w.get("dp_size") == shape.v.get("dp_size")
                    && w.get("tp_size") == shape.v.get("tp_size")
            });
            if !same {
                notes.push(Note {
                    at: *key_at,
                    what: format!(
                        "`--kv-transfer-config` key `kv_connector_extra_config.{shape_role}` is {}",
                        shape.v
                    ),
                    why: match want {
                        Some(w) => format!(
                            "pd-dsl derives {w} from the topology: a wrong shape makes the connector compute the peer's ports from the wrong rank layout"
                        ),
                        None => format!("the deployment has no {shape_role} engine"),
                    },
                });
            }
        }
    }
    // What one engine's kv-transfer-config says and pd-dsl does not
    // render, or renders on every engine.
    for &ei in order {
        let e = &engines[ei];
        let Some(kv) = &e.kv else { continue };
        for (k, v) in &kv.dropped {
            let what = format!("`--kv-transfer-config` key `{k}` ({v}) dropped");
            if !notes.iter().any(|n| n.what == what) {
                notes.push(Note {
                    at: kv.kind.at,
                    what,
                    why: format!(
                        "pd-dsl renders `kv_connector`, `kv_role`, `kv_port`, `engine_id` and `kv_connector_extra_config`; `{}` is found by its name",
                        kv.kind.v.kv_connector()
                    ),
                });
            }
        }
        for k in extra.keys() {
            if !kv.extra.contains_key(k) {
                let what = format!(
                    "`--kv-transfer-config` key `kv_connector_extra_config.{k}` set on some engines, not on this {} engine",
                    e.role
                );
                if !notes.iter().any(|n| n.what == what) {
                    notes.push(Note {
                        at: kv.kind.at,
                        what,
                        why: "pd-dsl renders one extra config for every engine".into(),
                    });
                }
            }
        }
    }
    let pool = pool_of(pool_in.take(), notes, engines, order, s)?;
    let kind = kind.unwrap_or(p(ConnectorKind::MooncakeV1, first.at));
    let collapse = |v: Vec<Spanned<u64>>| -> Vec<Spanned<u64>> {
        if v.len() > 1 && v.iter().all(|x| x.value == v[0].value) {
            v.into_iter().take(1).collect()
        } else {
            v
        }
    };
    let kind_site = s(kind.at);
    let connector = ConnectorSpec {
        kind: Spanned::new(kind.v, kind_site),
        kv_port: KvPorts {
            prefill: collapse(ports_by_role.remove(&Role::Prefill).unwrap_or_default()),
            decode: collapse(ports_by_role.remove(&Role::Decode).unwrap_or_default()),
        },
        extra,
        pool,
        site: kind_site,
    };
    let mut engine_ids = None;
    if ids_differ {
        engine_ids = Some(EngineIdsSpec {
            prefill: ids_by_role.remove(&Role::Prefill).unwrap_or_default(),
            decode: ids_by_role.remove(&Role::Decode).unwrap_or_default(),
            site: kind_site,
        });
    }
    Ok((connector, kind.at, engine_ids))
}
