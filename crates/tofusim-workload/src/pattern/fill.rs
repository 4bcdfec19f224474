//! Line fill and plane fill: every node broadcasts a message to all nodes of
//! its line (one ring) or plane (two rings) with BG/L deposit packets.
//!
//! A deposit packet travels one direction of one ring and is copied into
//! the reception FIFO of every node it passes ([S:004]: "deposit/broadcast
//! along one Cartesian dimension"). It is addressed to the node just behind
//! its source, so it visits all `L − 1` other nodes of the ring.
//!
//! **Colours.** The message is split packet by packet into colours that use
//! different links, so every incoming link of a node carries the same load:
//! - line fill: two colours, `+` and `−` along the axis;
//! - plane fill: four colours, `a+ then b+`, `a− then b−`, `b+ then a+`,
//!   `b− then a−`. The first leg is a deposit packet along the first ring;
//!   every node that receives it (the source included, for its own column)
//!   re-injects it along the second ring: the **corner turn**, done by the
//!   node's software. Each colour's first leg loads its links with
//!   `(L−1)/4` of a message per source and its second leg with `L(L−1)/4`,
//!   and the two legs swap roles between colour pairs, so all four
//!   incoming links of a node carry `(L²−1)/4` messages.

use super::{FiniteSource, Message};
use crate::space::Alive;
use crate::{NewMessage, NewPacket, NodeState, PacketFormat, WorkloadError};
use tofusim_topology::{NodeId, Torus};

/// Bits of a fill packet's tag: colour (2), leg (1), then the sequence number.
const COLOUR_BITS: u32 = 2;
const LEG_BIT: u32 = 1 << COLOUR_BITS;
const SEQ_SHIFT: u32 = COLOUR_BITS + 1;

/// A line or plane fill bound to a torus.
#[derive(Clone, Debug)]
pub struct Fill {
    torus: Torus,
    /// One axis (line fill) or two (plane fill).
    axes: Vec<usize>,
    /// Packets per message, and the router bytes and payload of the last one.
    packets: u32,
    full_bytes: u16,
    full_payload: u16,
    last_bytes: u16,
    last_payload: u16,
    /// Broadcast packets received (deposited or delivered) per node.
    received: Vec<u32>,
    received_payload_bytes: u64,
}

impl Fill {
    pub fn new(
        torus: &Torus,
        axes: Vec<usize>,
        message_bytes: u64,
        format: PacketFormat,
    ) -> Result<Self, WorkloadError> {
        let PacketFormat { packet_bytes, header_bytes, .. } = format;
        let dims = torus.axes().len();
        for (i, &a) in axes.iter().enumerate() {
            let ax = torus.axes().get(a).ok_or(WorkloadError {
                key: "axes",
                message: format!("expected axis indices below {dims}, found {a}"),
            })?;
            if !ax.wrap || ax.length < 2 || ax.ports != tofusim_topology::axis::PortStyle::PlusMinus
            {
                return Err(WorkloadError { key: "axes", message: format!("axis {a} ({}) must be a ring of length 2 or more with + and − ports for deposit packets", ax.name) });
            }
            if axes[..i].contains(&a) {
                return Err(WorkloadError {
                    key: "axes",
                    message: "expected two different axes for a plane fill".into(),
                });
            }
        }
        let payload = (packet_bytes - header_bytes) as u64;
        let m = message_bytes.max(1);
        let packets = m.div_ceil(payload);
        if packets > (u32::MAX >> SEQ_SHIFT) as u64 {
            return Err(WorkloadError {
                key: "message_bytes",
                message: format!(
                    "expected at most {} packets per message",
                    u32::MAX >> SEQ_SHIFT
                ),
            });
        }
        let last_payload = m - (packets - 1) * payload;
        let last_bytes = format.wire_bytes(last_payload);
        let n = torus.node_count() as usize;
        Ok(Self {
            torus: torus.clone(),
            axes,
            packets: packets as u32,
            full_bytes: packet_bytes as u16,
            full_payload: payload as u16,
            last_bytes: last_bytes as u16,
            last_payload: last_payload as u16,
            received: vec![0; n],
            received_payload_bytes: 0,
        })
    }

    fn colours(&self) -> u32 {
        2 * self.axes.len() as u32
    }

    /// Send lanes: one per direction used (`+`, `−` of each axis), each
    /// with its own injection FIFOs, so a busy direction does not hold back
    /// the others at the head of a queue.
    pub fn lanes(&self) -> usize {
        2 * self.axes.len()
    }

    /// Packets a node sends on its own in `lane`: its message once per
    /// first leg and (plane fill) once more along its own column, split over
    /// the lanes by direction.
    pub fn lane_packets(&self, lane: usize) -> u64 {
        let minus = (lane % 2) as u64;
        (self.packets as u64).saturating_sub(minus).div_ceil(2)
    }

    /// Nodes that must receive every node's message (line or plane size).
    pub fn group_nodes(&self) -> u64 {
        self.axes
            .iter()
            .map(|&a| self.torus.axes()[a].length as u64)
            .product()
    }

    /// Incoming links of a node that carry the broadcast.
    pub fn receiving_links(&self) -> u32 {
        2 * self.axes.len() as u32
    }

    /// The `i`-th packet `node` sends on its own in `lane`. Lane `2s + m`
    /// travels axis slot `s` in direction `m` (1 = −); it carries the
    /// sequence numbers of parity `m`: colours `m` and `m + 2`, as a first
    /// or a second leg.
    pub fn own_packet(&self, node: u32, lane: usize, i: u64) -> NewPacket {
        let (slot, minus) = (lane / 2, (lane % 2) as u32);
        let seq = 2 * i as u32 + minus;
        let colour = seq % self.colours();
        let second = self.axes.len() == 2 && ((colour < 2) == (slot == 1));
        self.leg_packet(node, seq, colour, second)
    }

    /// Axis slot and direction (`true` = −) of a colour's leg.
    fn leg(&self, colour: u32, second: bool) -> (usize, bool) {
        let minus = colour % 2 == 1;
        let swap = colour >= 2;
        let slot = if self.axes.len() == 1 {
            0
        } else {
            (second ^ swap) as usize
        };
        (slot, minus)
    }

    fn leg_packet(&self, node: u32, seq: u32, colour: u32, second: bool) -> NewPacket {
        let (slot, minus) = self.leg(colour, second);
        let axis = self.axes[slot];
        let l = self.torus.axes()[axis].length;
        let mut c = self.torus.coords(NodeId(node));
        // The node just behind the source: L − 1 hops in the travel direction.
        c[axis] = if minus {
            (c[axis] + 1) % l
        } else {
            (c[axis] + l - 1) % l
        };
        let dst = self.torus.node_id(&c).0;
        let last = seq + 1 == self.packets;
        let (bytes, payload) = if last {
            (self.last_bytes, self.last_payload)
        } else {
            (self.full_bytes, self.full_payload)
        };
        let tag = (seq << SEQ_SHIFT) | ((second as u32) * LEG_BIT) | colour;
        NewPacket {
            dst,
            bytes,
            payload,
            tag,
            hints: Some(if minus { 1 << axis } else { 0 }),
            deposit: true,
            lane: (2 * slot + minus as usize) as u8,
            release_cycle: 0,
        }
    }

    /// A broadcast packet deposited at (or delivered to) `node`: count it,
    /// and on a plane fill's first leg turn the corner.
    pub fn on_receive(&mut self, node: u32, tag: u32, out: &mut Vec<NewMessage>) {
        let seq = tag >> SEQ_SHIFT;
        let last = seq + 1 == self.packets;
        self.received[node as usize] += 1;
        self.received_payload_bytes += if last {
            self.last_payload
        } else {
            self.full_payload
        } as u64;
        if self.axes.len() == 2 && tag & LEG_BIT == 0 {
            out.push(self.leg_packet(node, seq, tag & ((1 << COLOUR_BITS) - 1), true).into());
        }
    }

    /// Per node `owned` accepts: the broadcast packets it received.
    pub fn export_received(&self, owned: &dyn Fn(u32) -> bool) -> Vec<(u32, u32)> {
        (0..self.received.len() as u32).filter(|&n| owned(n)).map(|n| (n, self.received[n as usize])).collect()
    }

    /// Takes what another partition's nodes received.
    pub fn import_received(&mut self, nodes: &[(u32, u32)], payload_bytes: u64) {
        for &(n, c) in nodes {
            self.received[n as usize] = c;
        }
        self.received_payload_bytes += payload_bytes;
    }

    pub fn received_payload_bytes(&self) -> u64 {
        self.received_payload_bytes
    }

    /// At the end of a complete run every node must have received every
    /// packet of every other node of its group exactly once.
    pub fn check_complete(&self) -> Result<(), String> {
        let want = (self.group_nodes() - 1) * self.packets as u64;
        match self.received.iter().position(|&r| r as u64 != want) {
            None => Ok(()),
            Some(v) => Err(format!(
                "node {v} received {} broadcast packets, expected {want}",
                self.received[v]
            )),
        }
    }
}

impl FiniteSource for Fill {
    fn lanes(&self) -> usize {
        Fill::lanes(self)
    }

    fn initial_packets(&self, _node: u32, lane: usize) -> u64 {
        self.lane_packets(lane)
    }

    fn packet(&self, node: u32, lane: usize, i: u64) -> NewPacket {
        self.own_packet(node, lane, i)
    }

    fn on_delivery(&mut self, node: u32, _t: u64, tag: u32, out: &mut Vec<NewMessage>) {
        self.on_receive(node, tag, out);
    }

    fn on_failed(&mut self, _alive: &Alive) -> Result<(), WorkloadError> {
        Err(WorkloadError { key: "pattern", message: "line and plane fills with failed nodes are not modelled: their deposit broadcasts would have to pass the failed node".into() })
    }

    fn messages(&self) -> Result<Vec<Message>, WorkloadError> {
        Err(WorkloadError { key: "pattern", message: "the flow model runs alltoall, hot-spot, hot-burst, trace, pingpong and the open-loop patterns; line and plane fills deposit copies at every node they pass, which it does not model (use the packet engine)".into() })
    }

    /// Each node's packets of its first lane, at most one per node.
    fn message_count(&self) -> u64 {
        let nodes = self.received.len() as u64;
        nodes * self.lane_packets(0).min(nodes)
    }

    fn fill(&self) -> Option<&Fill> {
        Some(self)
    }

    fn node_state(&self, owned: &dyn Fn(u32) -> bool) -> NodeState {
        NodeState { fill_received: self.export_received(owned), fill_payload_bytes: self.received_payload_bytes, pingpong: None }
    }

    fn absorb(&mut self, s: &NodeState) {
        self.import_received(&s.fill_received, s.fill_payload_bytes);
    }

    fn clone_box(&self) -> Box<dyn FiniteSource> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(t: &Torus, src: u32, np: &NewPacket) -> Vec<u32> {
        // Follow the forced direction until the destination, like the router.
        let h = np.hints.unwrap();
        let axis = (0..t.axes().len()).find(|&a| {
            let (cs, cd) = (t.coord(NodeId(src), a), t.coord(NodeId(np.dst), a));
            cs != cd
        });
        let Some(axis) = axis else { return vec![] };
        let l = t.axes()[axis].length;
        let mut c = t.coords(NodeId(src));
        let mut out = vec![];
        loop {
            c[axis] = if h & (1 << axis) != 0 {
                (c[axis] + l - 1) % l
            } else {
                (c[axis] + 1) % l
            };
            let v = t.node_id(&c).0;
            out.push(v);
            if v == np.dst {
                return out;
            }
        }
    }

    #[test]
    fn plane_fill_reaches_every_node_once_with_balanced_links() {
        let t = Torus::with_lengths(&[4, 4, 2], &[true, true, true]);
        let mut f = Fill::new(&t, vec![0, 1], 4 * 240, PacketFormat::new(256, 16)).unwrap();
        let mut link_load = std::collections::HashMap::<(u32, u32), u32>::new();
        let mut queue: Vec<(u32, NewPacket)> = vec![];
        for v in 0..t.node_count() as u32 {
            for lane in 0..f.lanes() {
                for i in 0..f.lane_packets(lane) {
                    let np = f.own_packet(v, lane, i);
                    assert_eq!(np.lane as usize, lane);
                    queue.push((v, np));
                }
            }
        }
        while let Some((src, np)) = queue.pop() {
            let mut prev = src;
            for v in walk(&t, src, &np) {
                *link_load.entry((prev, v)).or_default() += 1;
                prev = v;
                let mut out = vec![];
                f.on_receive(v, np.tag, &mut out);
                queue.extend(out.into_iter().map(|m| (v, m.first)));
            }
        }
        f.check_complete().unwrap();
        // 4 packets per message, (L² − 1)/4 messages per link: 15 packets.
        assert!(link_load.values().all(|&l| l == 15), "{link_load:?}");
    }

    #[test]
    fn lanes_cover_every_packet_once() {
        let t = Torus::with_lengths(&[4, 4], &[true, true]);
        for (axes, msg) in [(vec![0], 7 * 240), (vec![0, 1], 7 * 240), (vec![0, 1], 240)] {
            let f = Fill::new(&t, axes.clone(), msg, PacketFormat::new(256, 16)).unwrap();
            let mut seen = std::collections::BTreeSet::new();
            for lane in 0..f.lanes() {
                for i in 0..f.lane_packets(lane) {
                    assert!(seen.insert(f.own_packet(0, lane, i).tag));
                }
            }
            assert_eq!(seen.len() as u64, f.packets as u64 * axes.len() as u64);
        }
    }

    #[test]
    fn line_fill_needs_a_ring() {
        let t = Torus::with_lengths(&[4, 4], &[false, true]);
        assert!(Fill::new(&t, vec![0], 256, PacketFormat::new(256, 16)).is_err());
        assert!(Fill::new(&t, vec![1], 256, PacketFormat::new(256, 16)).is_ok());
        assert!(Fill::new(&t, vec![1, 1], 256, PacketFormat::new(256, 16)).is_err());
        assert!(Fill::new(&t, vec![2], 256, PacketFormat::new(256, 16)).is_err());
    }
}
