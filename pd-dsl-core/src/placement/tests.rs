//! Tests of the placement.

use super::*;

fn shape(role: Role, count: u32, dp: u32, tp: u32, per_node: u32) -> GroupShape {
    GroupShape {
        role,
        count,
        dp,
        tp,
        pcp: 1,
        ranks_per_node: default_ranks_per_node(dp, tp, per_node),
    }
}

fn pd_input(kv_p: Vec<u32>, kv_d: Vec<u32>) -> PlacementInput {
    PlacementInput {
        api_port: 7100,
        dp_rpc_port: Some(12321),
        connector: Some(ConnectorKind::MooncakeV1),
        kv_prefill: kv_p,
        kv_decode: kv_d,
        ..PlacementInput::default()
    }
}

/// Seed 001, A3 2P1D: P DP2 TP8 on .1 and .2 (independent), D DP32 TP1
/// over .3/.4. Expected values written from the tutorial's launcher lines.
#[test]
fn v3_1_a3_2p1d_matches_the_tutorial_launcher_lines() {
    let p = place(
        &[
            shape(Role::Prefill, 2, 2, 8, 16),
            shape(Role::Decode, 1, 32, 1, 16),
        ],
        &pd_input(vec![30000, 30100], vec![30200]),
    );
    let rows: Vec<(u32, u32, u32, usize)> = p
        .nodes
        .iter()
        .map(|n| {
            (
                p.engines[n.engine].dp,
                n.dp_size_local,
                n.dp_rank_start,
                n.dp_master,
            )
        })
        .collect();
    // (dp-size, dp-size-local, dp-rank-start, dp-address node)
    assert_eq!(
        rows,
        vec![(2, 2, 0, 0), (2, 2, 0, 1), (32, 16, 0, 2), (32, 16, 16, 2)]
    );
    assert_eq!(
        p.nodes[0].ranks[1].devices,
        vec![8, 9, 10, 11, 12, 13, 14, 15]
    );
    assert_eq!(p.proxy.prefill.len(), 4);
    assert_eq!(p.proxy.decode.len(), 32);
    assert_eq!(
        p.proxy.decode[16],
        Endpoint {
            node: 3,
            port: 7100
        }
    );
    assert_eq!(
        p.proxy.decode[31],
        Endpoint {
            node: 3,
            port: 7115
        }
    );
    // Engine ids by convention and kv ports per engine.
    let ids: Vec<_> = p.engines.iter().map(|e| (e.engine_id, e.kv_port)).collect();
    assert_eq!(
        ids,
        vec![
            (Some(0), Some(30000)),
            (Some(2), Some(30100)),
            (Some(1), Some(30200))
        ]
    );
    // V1: S = tp; P rank 1 of engine 0 spans 30008-30015; D node 1 rank 16 = 30216.
    assert_eq!(p.nodes[0].ranks[1].kv_span, Some((30008, 30015)));
    assert_eq!(p.nodes[3].ranks[0].kv_span, Some((30216, 30216)));
    assert!(p.nodes[0].hosts_proxy && !p.nodes[1].hosts_proxy);
}

/// Seed 001, 950DT 2P1D: P DP4 TP4 on two 8-NPU nodes each (2 ranks per
/// node, rank starts 0 and 2), D DP32 TP1 over four nodes (0/8/16/24).
#[test]
fn v3_1_950dt_engines_span_nodes() {
    let p = place(
        &[
            shape(Role::Prefill, 2, 4, 4, 8),
            shape(Role::Decode, 1, 32, 1, 8),
        ],
        &pd_input(vec![30100], vec![30300]),
    );
    let starts: Vec<(u32, u32, usize)> = p
        .nodes
        .iter()
        .map(|n| (n.dp_size_local, n.dp_rank_start, n.dp_master))
        .collect();
    assert_eq!(
        starts,
        vec![
            (2, 0, 0),
            (2, 2, 0),
            (2, 0, 2),
            (2, 2, 2),
            (8, 0, 4),
            (8, 8, 4),
            (8, 16, 4),
            (8, 24, 4)
        ]
    );
    assert_eq!(p.nodes[1].ranks[1].devices, vec![4, 5, 6, 7]);
    assert_eq!(p.nodes[1].ranks[1].api_port, Some(7101));
    // P engine 1 rank 3 on node 3: 30100 + 3*4 .. +3
    assert_eq!(p.nodes[3].ranks[1].kv_span, Some((30112, 30115)));
    assert_eq!(p.proxy.prefill.len(), 8);
    assert_eq!(p.proxy.decode.len(), 32);
}

/// Seed 001, 2xA2 native DP: DP4 TP4, two ranks per node, node 1 headless
/// from start rank 2; one API server on node 0.
#[test]
fn a2_mixed_native_dp_is_headless_on_the_second_node() {
    let p = place(
        &[shape(Role::Mixed, 1, 4, 4, 8)],
        &PlacementInput {
            api_port: 8004,
            ..PlacementInput::default()
        },
    );
    assert_eq!(p.nodes.len(), 2);
    assert_eq!((p.nodes[1].dp_size_local, p.nodes[1].dp_rank_start), (2, 2));
    assert!(!p.nodes[0].headless && p.nodes[1].headless);
    assert_eq!(p.nodes[0].ranks[0].api_port, Some(8004));
    assert_eq!(p.nodes[0].ranks[1].api_port, None);
    assert!(p.proxy.prefill.is_empty() && p.proxy.decode.is_empty());
    assert!(!p.nodes[0].hosts_proxy);
}

/// One rank per node with TP equal to the node (A3 DP2 TP16), and a TP4
/// decode spanning two nodes (DP8 TP4 on A3 = 32 NPUs).
#[test]
fn whole_node_ranks_and_tp_gt_1_decode() {
    let p = place(
        &[
            shape(Role::Prefill, 1, 2, 16, 16),
            shape(Role::Decode, 1, 8, 4, 16),
        ],
        &PlacementInput {
            api_port: 7100,
            connector: Some(ConnectorKind::MooncakeHybrid),
            kv_prefill: vec![36000],
            kv_decode: vec![36100],
            ids_prefill: Some(vec![vec![10]]),
            ..PlacementInput::default()
        },
    );
    assert_eq!(p.nodes.len(), 4);
    assert_eq!(p.nodes[1].ranks[0].dp_rank, 1);
    assert_eq!(p.nodes[1].ranks[0].kv_span, Some((36016, 36031)));
    assert_eq!(
        p.nodes[3].ranks[3].kv_span,
        Some((36100 + 7 * 4, 36100 + 8 * 4 - 1))
    );
    assert_eq!(p.engines[0].engine_id, Some(10));
    assert_eq!(p.engines[1].engine_id, Some(1));
    assert_eq!(
        p.proxy.prefill,
        vec![
            Endpoint {
                node: 0,
                port: 7100
            },
            Endpoint {
                node: 1,
                port: 7100
            }
        ]
    );
}

/// Upstream's longseq config (DeepSeek-R1-W8A8-longseq.yaml @0.23.0):
/// prefill dp1 tp8 pcp2 on one A3 node, decode dp2 tp8. A prefill rank
/// holds 16 NPUs and, for V1, 16 handshake ports; Hybrid keeps tp ports.
#[test]
fn a_pcp_rank_spans_tp_times_pcp_npus_and_ports() {
    let mut prefill = shape(Role::Prefill, 1, 1, 8, 16);
    prefill.pcp = 2;
    prefill.ranks_per_node = default_ranks_per_node(1, 16, 16);
    let p = place(
        &[prefill, shape(Role::Decode, 1, 2, 8, 16)],
        &pd_input(vec![30000], vec![30100]),
    );
    assert_eq!(p.nodes.len(), 2);
    assert_eq!(p.nodes[0].ranks[0].devices, (0..16).collect::<Vec<_>>());
    assert_eq!(p.nodes[0].ranks[0].kv_span, Some((30000, 30015)));
    assert_eq!(p.engines[0].rank_npus(), 16);
    assert_eq!(p.nodes[1].ranks[1].devices, (8..16).collect::<Vec<_>>());
    assert_eq!(p.nodes[1].ranks[1].kv_span, Some((30108, 30115)));
    // DP rank 1 of a pcp2 tp4 V1 engine starts at kv + 1·(4·2)
    assert_eq!(
        kv_span(ConnectorKind::MooncakeV1, 30000, 1, 4, 2),
        (30008, 30015)
    );
    assert_eq!(
        kv_span(ConnectorKind::MooncakeHybrid, 30000, 1, 4, 2),
        (30004, 30007)
    );
    assert_eq!(
        kv_span(ConnectorKind::MooncakeLayerwise, 30000, 1, 4, 2),
        (30008, 30015)
    );
}

#[test]
fn roles_are_ordered_prefill_first_whatever_the_writing_order() {
    let p = place(
        &[
            shape(Role::Decode, 1, 16, 1, 16),
            shape(Role::Prefill, 3, 4, 4, 16),
        ],
        &pd_input(vec![36000], vec![36100]),
    );
    let roles: Vec<Role> = p.nodes.iter().map(|n| n.role).collect();
    assert_eq!(
        roles,
        vec![Role::Prefill, Role::Prefill, Role::Prefill, Role::Decode]
    );
    let ids: Vec<_> = p.engines.iter().filter_map(|e| e.engine_id).collect();
    assert_eq!(ids, vec![0, 2, 4, 1]);
    assert_eq!(p.proxy.prefill.len(), 12);
    assert_eq!(p.proxy.decode.len(), 16);
}

/// Upstream e2e configs give prefill and decode nodes their own
/// `port_start` and `dp_rpc_port`: each engine starts its API ports at
/// its role's port and the proxy lists exactly those.
#[test]
fn per_role_ports_start_each_engine_at_its_roles_port() {
    let mut input = pd_input(vec![30000], vec![30100]);
    input.role_ports.insert(
        Role::Decode,
        RolePorts {
            api: 9000,
            dp_rpc: Some(13000),
        },
    );
    let p = place(
        &[
            shape(Role::Prefill, 2, 2, 8, 16),
            shape(Role::Decode, 1, 32, 1, 16),
        ],
        &input,
    );
    let ports: Vec<(Role, u32, Option<u32>)> = p
        .engines
        .iter()
        .map(|e| (e.role, e.api_port, e.dp_rpc_port))
        .collect();
    assert_eq!(
        ports,
        vec![
            (Role::Prefill, 7100, Some(12321)),
            (Role::Prefill, 7100, Some(12321)),
            (Role::Decode, 9000, Some(13000))
        ]
    );
    assert_eq!(p.nodes[3].ranks[15].api_port, Some(9015));
    assert_eq!(
        p.proxy.prefill[1],
        Endpoint {
            node: 0,
            port: 7101
        }
    );
    assert_eq!(
        p.proxy.decode[0],
        Endpoint {
            node: 2,
            port: 9000
        }
    );
    assert_eq!(
        p.proxy.decode[31],
        Endpoint {
            node: 3,
            port: 9015
        }
    );
}

/// A rank's devices are held inline: no node of the hardware table has
/// more NPUs than a [`Devices`] holds, and a whole node's rank reads back
/// every device in order.
#[test]
fn a_rank_holds_a_whole_node_of_devices() {
    for hw in crate::tables::HARDWARE {
        let n = hw.npus_per_node;
        assert!(
            n as usize <= MAX_RANK_DEVICES,
            "hardware `{}` has {n} NPUs per node, more than a rank's devices hold ({MAX_RANK_DEVICES})",
            hw.id
        );
        let d = Devices::range(0..n);
        assert_eq!(d, (0..n).collect::<Vec<u32>>());
        assert_eq!(
            format!("{d:?}"),
            format!("{:?}", (0..n).collect::<Vec<u32>>())
        );
        assert_eq!(
            serde_json::to_string(&d).ok(),
            serde_json::to_string(&(0..n).collect::<Vec<u32>>()).ok()
        );
    }
    assert_eq!(Devices::range(4..8).len(), 4);
    assert_eq!(&Devices::range(4..8)[..], &[4, 5, 6, 7]);
    // More than a rank holds is cut to its first ids.
    assert_eq!(
        &Devices::range(3..40)[..],
        &(3..19).collect::<Vec<u32>>()[..]
    );
}

/// A rank placed past its node's NPUs (a layout the topology rules refuse,
/// placed before it is judged) reads as far as the id table goes, without
/// a panic.
#[test]
fn devices_past_the_id_table_are_cut_not_a_panic() {
    assert_eq!(&Devices::range(1020..1030)[..], &[1020, 1021, 1022, 1023]);
    assert!(Devices::range(5000..5008).is_empty());
    assert!(Devices::range(u32::MAX - 1..u32::MAX).is_empty());
    let p = place(
        &[GroupShape {
            ranks_per_node: 100,
            ..shape(Role::Decode, 1, 100, 16, 16)
        }],
        &PlacementInput::default(),
    );
    let last = p.nodes[0].ranks.last().map(|r| r.devices.to_vec());
    assert_eq!(last, Some(Vec::new()), "rank 99 would hold ids 1584-1599");
}
