//! The one list of a node's sockets, read by the collision rule and by
//! preflight's free-port check, on the V3.1 A3 2P1D of seed 001 (API 7100,
//! RPC 12321, proxy 1999, kv 30000/30100/30200 as the tutorial writes them).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::{Socket, SocketKind};

fn layout() -> &'static pd_dsl::Layout {
    layouts::catalog()
        .expect("catalog")
        .iter()
        .find(|l| l.name() == "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d")
        .expect("registered")
}

#[test]
fn node_0_has_its_ranks_the_dp_master_rpc_and_the_proxy() {
    let s = layout().node_sockets(0);
    let api = |dp_rank, p| Socket {
        first: p,
        last: p,
        kind: SocketKind::Api { dp_rank },
    };
    let kv = |dp_rank, first, last| Socket {
        first,
        last,
        kind: SocketKind::Kv {
            dp_rank,
            binds: true,
        },
    };
    assert_eq!(
        s,
        vec![
            api(0, 7100),
            kv(0, 30000, 30007),
            api(1, 7101),
            kv(1, 30008, 30015),
            Socket {
                first: 12321,
                last: 12321,
                kind: SocketKind::DpRpc
            },
            Socket {
                first: 1999,
                last: 1999,
                kind: SocketKind::Proxy
            },
        ]
    );
}

#[test]
fn a_decode_node_that_is_not_the_master_neither_binds_kv_nor_listens_for_rpc() {
    let s = layout().node_sockets(3);
    assert_eq!(s.len(), 32, "16 API ports and 16 kv spans");
    assert!(
        s.iter()
            .all(|x| !matches!(x.kind, SocketKind::DpRpc | SocketKind::Proxy))
    );
    // MooncakeConnectorV1: prefill binds, decode only connects (facts §3.3).
    assert!(s.contains(&Socket {
        first: 30216,
        last: 30216,
        kind: SocketKind::Kv {
            dp_rank: 16,
            binds: false
        }
    }));
    // Preflight only checks what this node binds.
    let free = pd_dsl::render::scripts::node_ports(layout(), 3);
    assert_eq!(free, vec![(7100, 7115)]);
    assert!(layout().node_sockets(9).is_empty(), "no such node");
}
