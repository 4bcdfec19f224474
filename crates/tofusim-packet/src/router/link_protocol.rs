//! The link-level protocol of an output (BG/L, [S:004]): errors on
//! the wire, CRC detection, the retransmission FIFO with its
//! acknowledgements, time-out and go-back-N, and the cumulative link CRC.
//!
//! Every decision is the sender's, so a link's protocol lives with the
//! router that drives it and a split run needs no messages for it: the
//! sender draws whether a transmission is corrupted (its own seeded
//! generator per link, so the draws do not depend on the partitioning);
//! the receiver discards a corrupted packet and every packet after it
//! until the retransmission (go-back-N: it accepts packets in sequence
//! only), so those stay in the sender's retransmission FIFO and no
//! arrival is scheduled for them. A corrupted packet's time-out fires
//! [`LinkErrors::timeout_cycles`] after its transmission ended; the sender
//! then sends it and everything after it again, in order, before any new
//! packet. An accepted packet's acknowledgement rides on a token-ack (the
//! per-packet overhead bytes carry it): it reaches the sender a fixed hop
//! plus token return after the packet's tail, and frees its FIFO slot. A packet keeps the downstream
//! buffer space it was granted until it is accepted there, so
//! retransmissions need no new tokens and tokens stay conserved.
//!
//! A corrupted packet passes the 24-bit CRC with probability
//! [`LinkErrors::crc_escape_probability`]: the receiver accepts it, and
//! only the two ends' cumulative 32-bit link CRCs, compared at the end of
//! the run, disagree — the run is then untrustworthy, as on the machine.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use serde::Serialize;

use crate::config::{ErrorRate, LinkErrors};

/// Counts of the protocol's events, summed over links.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LinkTally {
    /// Packets put on a wire, retransmissions included.
    pub transmissions: u64,
    /// Transmissions corrupted and caught by the packet CRC.
    pub corrupted: u64,
    /// Corrupted transmissions the CRC missed (accepted corrupt).
    pub crc_escapes: u64,
    /// Transmissions discarded because an earlier packet was corrupted
    /// (go-back-N: the receiver accepts packets in sequence only).
    pub discarded: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    /// Times a full retransmission FIFO stopped a link.
    pub window_stalls: u64,
    /// Packet slicing: transmissions in duplicate mode, and the switches
    /// between the modes (either way).
    pub duplicate_transmissions: u64,
    pub mode_switches: u64,
    /// Transmissions into a link that was down (a failure during the
    /// run): not accepted, sent again at the time-outs until it recovers.
    pub down_link: u64,
}

impl LinkTally {
    pub const FIELDS: usize = 10;

    pub fn to_array(self) -> [u64; Self::FIELDS] {
        [
            self.transmissions,
            self.corrupted,
            self.crc_escapes,
            self.discarded,
            self.retransmissions,
            self.timeouts,
            self.window_stalls,
            self.duplicate_transmissions,
            self.mode_switches,
            self.down_link,
        ]
    }

    pub fn add(&mut self, a: &[u64; Self::FIELDS]) {
        let f = [
            &mut self.transmissions,
            &mut self.corrupted,
            &mut self.crc_escapes,
            &mut self.discarded,
            &mut self.retransmissions,
            &mut self.timeouts,
            &mut self.window_stalls,
            &mut self.duplicate_transmissions,
            &mut self.mode_switches,
            &mut self.down_link,
        ];
        for (x, y) in f.into_iter().zip(a) {
            *x += y;
        }
    }
}

/// What became of one transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// The receiver takes it: its arrival is scheduled.
    Accepted,
    /// Corrupted and caught: held for retransmission; the time-out is due
    /// at the given cycle.
    Corrupted(u64),
    /// Sent behind a corrupted packet: discarded, held for retransmission.
    Discarded,
}

/// Every link's protocol state, by router · ports + port.
pub(crate) struct LinkProtocol {
    pub cfg: Arc<LinkErrors>,
    rate: Vec<ErrorRate>,
    rng: Vec<rand_pcg::Pcg32>,
    in_burst: Vec<bool>,
    /// When each accepted, unacknowledged packet's acknowledgement arrives.
    acks: Vec<VecDeque<u64>>,
    /// Packets to send again, in order (the first was corrupted).
    pub resend: Vec<VecDeque<u32>>,
    /// When the link's last transmission ends.
    pub tx_end: Vec<u64>,
    /// The cumulative link CRCs: of what the sender sent and had
    /// acknowledged, and of what the receiver accepted.
    crc_sent: Vec<u32>,
    crc_accepted: Vec<u32>,
    /// Cycles from a packet's tail leaving to its acknowledgement's return.
    ack_delay: u64,
    pub tally: LinkTally,
    /// Mismatched links reported by the other partitions of a split run.
    pub absorbed_mismatches: Vec<u32>,
    /// Packet slicing: per link, duplicate mode; per link and lane, slice
    /// errors in the current monitoring window; per link, its transmissions.
    duplicate: Vec<bool>,
    lane_errors: Vec<u32>,
    window_tx: Vec<u32>,
}

impl LinkProtocol {
    /// The protocol on every link of `routers` × `ports`, its draws seeded
    /// from `seed` per link; acknowledgements return `ack_delay` cycles
    /// after a packet's tail.
    pub fn new(cfg: Arc<LinkErrors>, routers: usize, ports: usize, seed: u64, ack_delay: u64) -> Self {
        let links = routers * ports;
        let cfg_lanes = cfg.slicing.as_ref().map_or(0, |s| s.lanes as usize);
        let mut rate = vec![cfg.rate; links];
        for &(r, p, x) in &cfg.links {
            rate[r as usize * ports + p as usize] = x;
        }
        let rng = (0..links)
            // A stream per link, the same whatever the partitions.
            .map(|l| rand_pcg::Pcg32::seed_from_u64((seed ^ 0x6c69_6e6b_5f65_7272).wrapping_add((l as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))))
            .collect();
        LinkProtocol {
            cfg,
            rate,
            rng,
            in_burst: vec![false; links],
            acks: (0..links).map(|_| VecDeque::new()).collect(),
            resend: (0..links).map(|_| VecDeque::new()).collect(),
            tx_end: vec![0; links],
            crc_sent: vec![0; links],
            crc_accepted: vec![0; links],
            ack_delay,
            tally: LinkTally::default(),
            absorbed_mismatches: Vec::new(),
            duplicate: vec![false; links],
            lane_errors: vec![0; links * cfg_lanes],
            window_tx: vec![0; links],
        }
    }

    /// What slicing adds to a packet on link `l`: extra bytes and the
    /// number of copies. Split, the extra header copies ((lanes − 1) ×
    /// header), one copy; duplicated, every lane carries the whole packet
    /// at its share of the link rate (lanes copies' worth of wire time).
    pub fn expansion(&self, l: usize) -> (u16, u64) {
        match &self.cfg.slicing {
            None => (0, 1),
            Some(s) if self.duplicate[l] => (0, s.lanes as u64),
            Some(s) => ((s.lanes as u32 - 1) as u16 * s.header_bytes as u16, 1),
        }
    }

    /// Whether a sliced transmission of `wire_bytes` in all (as sent, see
    /// [`Self::expansion`]) on link `l` is corrupted: split, if any lane's
    /// slice is; duplicated, if every lane's copy is. Each lane's errors are
    /// counted for the monitor, which switches the mode at the end of its
    /// window.
    fn sliced_corrupts(&mut self, l: usize, wire_bytes: u64) -> bool {
        let s = self.cfg.slicing.as_ref().expect("sliced links");
        let lanes = s.lanes as usize;
        let dup = self.duplicate[l];
        // Bytes each lane carries: a whole copy, or its slice with the header.
        // (split: W + (lanes - 1) header in all, a slice (W - header) /
        // lanes + header of it; duplicated: W per lane, W lanes in all.)
        let lane_bytes = wire_bytes / lanes as u64;
        let (mut any, mut all) = (false, true);
        for k in 0..lanes {
            let p = ErrorRate::PerBit(s.lane_bit_error_rates[k]).packet_probability(lane_bytes);
            let bad = p > 0.0 && self.rng[l].random_bool(p.min(1.0));
            self.lane_errors[l * lanes + k] += bad as u32;
            any |= bad;
            all &= bad;
        }
        self.tally.duplicate_transmissions += dup as u64;
        self.window_tx[l] += 1;
        if self.window_tx[l] >= s.monitor_packets {
            let n = self.window_tx[l] as f64;
            let worst = (0..lanes).map(|k| self.lane_errors[l * lanes + k]).max().unwrap_or(0) as f64 / n;
            let switch = if dup { worst < s.split_below } else { s.dynamic && worst > s.duplicate_above };
            if switch {
                self.duplicate[l] = !dup;
                self.tally.mode_switches += 1;
            }
            self.window_tx[l] = 0;
            self.lane_errors[l * lanes..(l + 1) * lanes].iter_mut().for_each(|e| *e = 0);
        }
        if dup {
            all
        } else {
            any
        }
    }

    /// Whether the transmission of `wire_bytes` on link `l` is corrupted
    /// (the burst state moves first).
    fn corrupts(&mut self, l: usize, wire_bytes: u64) -> bool {
        if self.cfg.slicing.is_some() {
            return self.sliced_corrupts(l, wire_bytes);
        }
        let rng = &mut self.rng[l];
        let p = match self.cfg.bursts {
            Some(b) => {
                let flip = if self.in_burst[l] { 1.0 / b.mean_burst_packets } else { 1.0 / b.mean_gap_packets };
                if rng.random_bool(flip.clamp(0.0, 1.0)) {
                    self.in_burst[l] = !self.in_burst[l];
                }
                if self.in_burst[l] {
                    b.error_rate
                } else {
                    self.rate[l].packet_probability(wire_bytes)
                }
            }
            None => self.rate[l].packet_probability(wire_bytes),
        };
        p > 0.0 && rng.random_bool(p.min(1.0))
    }

    /// One transmission on link `l` from `start` for `wire` cycles of
    /// `wire_bytes` (what the error rates act on) of packet `pkt` (its
    /// end-to-end `checksum`): whether the receiver accepts it. `resent`: a
    /// retransmission (counted apart); `behind`: an earlier packet of this
    /// pass was corrupted, so the receiver discards it whatever the wire
    /// does; `down`: the link has failed — no receiver takes anything, and
    /// the sender finds out by the time-out as for a corruption.
    #[allow(clippy::too_many_arguments)]
    pub fn transmit(&mut self, l: usize, start: u64, wire: u64, wire_bytes: u64, pkt: u32, checksum: u32, resent: bool, behind: bool, down: bool) -> Fate {
        self.tally.transmissions += 1;
        self.tally.retransmissions += resent as u64;
        self.tx_end[l] = self.tx_end[l].max(start + wire);
        let behind = behind || (!resent && !self.resend[l].is_empty());
        // The wire acts on every transmission, discarded or not.
        let corrupted = self.corrupts(l, wire_bytes);
        if behind {
            self.tally.discarded += 1;
            if !resent {
                self.resend[l].push_back(pkt);
            }
            return Fate::Discarded;
        }
        if down {
            self.tally.down_link += 1;
            if !resent {
                self.resend[l].push_back(pkt);
            }
            return Fate::Corrupted(start + wire + self.cfg.timeout_cycles);
        }
        if corrupted {
            let escapes = self.cfg.crc_escape_probability > 0.0 && self.rng[l].random_bool(self.cfg.crc_escape_probability.min(1.0));
            if !escapes {
                self.tally.corrupted += 1;
                if !resent {
                    self.resend[l].push_back(pkt);
                }
                return Fate::Corrupted(start + wire + self.cfg.timeout_cycles);
            }
            // Accepted corrupt: the receiver's CRC folds what it got.
            self.tally.crc_escapes += 1;
            self.crc_sent[l] = fold(self.crc_sent[l], checksum);
            self.crc_accepted[l] = fold(self.crc_accepted[l], checksum ^ 0x5bd1_e995);
        } else {
            self.crc_sent[l] = fold(self.crc_sent[l], checksum);
            self.crc_accepted[l] = fold(self.crc_accepted[l], checksum);
        }
        self.acks[l].push_back(start + wire + self.ack_delay);
        Fate::Accepted
    }

    /// The packets link `l` must send again, taken out in order.
    pub fn take_resend(&mut self, l: usize) -> VecDeque<u32> {
        self.tally.timeouts += 1;
        std::mem::take(&mut self.resend[l])
    }

    /// Packets that failed again in a retransmission pass go back, in order.
    pub fn put_back(&mut self, l: usize, rest: VecDeque<u32>) {
        debug_assert!(self.resend[l].is_empty(), "nothing is sent on a link while it retransmits");
        self.resend[l] = rest;
    }

    /// After a transmission ending at `end`: `None` if the retransmission
    /// FIFO has room for the next packet; otherwise when it frees a slot
    /// (the first acknowledgement due), or `u64::MAX` if only the pending
    /// time-out can free it.
    pub fn window_full(&mut self, l: usize, end: u64) -> Option<u64> {
        let acks = &mut self.acks[l];
        while acks.front().is_some_and(|&a| a <= end) {
            acks.pop_front();
        }
        let held = acks.len() + self.resend[l].len();
        if held < self.cfg.retransmission_fifo_packets as usize {
            return None;
        }
        self.tally.window_stalls += 1;
        Some(if self.resend[l].is_empty() { *acks.front().expect("a full FIFO holds acknowledgements due") } else { u64::MAX })
    }

    /// Links (router · ports + port) whose cumulative CRCs disagree.
    pub fn crc_mismatches(&self, own: impl Fn(usize) -> bool) -> Vec<u32> {
        (0..self.crc_sent.len()).filter(|&l| own(l) && self.crc_sent[l] != self.crc_accepted[l]).map(|l| l as u32).collect()
    }

    /// The packets awaiting retransmission on link `l` (the audit finds
    /// them here and counts the downstream buffer space they keep).
    pub fn held(&self, l: usize) -> impl Iterator<Item = u32> + '_ {
        self.resend[l].iter().copied()
    }
}

/// One step of the cumulative link CRC (CRC-32 of the packet's checksum
/// word, chained).
fn fold(crc: u32, word: u32) -> u32 {
    let mut c = !crc;
    for b in word.to_le_bytes() {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xedb8_8320 } else { c >> 1 };
        }
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(rate: f64, fifo: u32) -> LinkProtocol {
        let cfg = LinkErrors {
            rate: ErrorRate::PerPacket(rate),
            links: Vec::new(),
            bursts: None,
            timeout_cycles: 1000,
            retransmission_fifo_packets: fifo,
            crc_escape_probability: 0.0,
            slicing: None,
        };
        LinkProtocol::new(Arc::new(cfg), 1, 1, 7, 50)
    }

    #[test]
    fn a_corrupted_packet_and_those_behind_it_wait_for_the_time_out_in_order() {
        let mut lp = protocol(0.0, 8);
        assert_eq!(lp.transmit(0, 0, 100, 100, 1, 11, false, false, false), Fate::Accepted);
        lp.rate[0] = ErrorRate::PerPacket(1.0);
        assert_eq!(lp.transmit(0, 100, 100, 100, 2, 12, false, false, false), Fate::Corrupted(1200));
        lp.rate[0] = ErrorRate::PerPacket(0.0);
        assert_eq!(lp.transmit(0, 200, 100, 100, 3, 13, false, false, false), Fate::Discarded);
        assert_eq!(lp.take_resend(0), VecDeque::from([2, 3]));
        assert_eq!(lp.transmit(0, 1200, 100, 100, 2, 12, true, false, false), Fate::Accepted);
        assert_eq!(lp.transmit(0, 1300, 100, 100, 3, 13, true, false, false), Fate::Accepted);
        let t = lp.tally;
        assert_eq!((t.transmissions, t.corrupted, t.discarded, t.retransmissions, t.timeouts), (5, 1, 1, 2, 1));
        assert!(lp.crc_mismatches(|_| true).is_empty());
    }

    #[test]
    fn the_fifo_stops_the_link_until_an_acknowledgement_or_the_time_out() {
        let mut lp = protocol(0.0, 2);
        lp.transmit(0, 0, 100, 100, 1, 1, false, false, false);
        assert_eq!(lp.window_full(0, 100), None);
        lp.transmit(0, 100, 100, 100, 2, 2, false, false, false);
        // Two unacknowledged (acks at 150 and 250): full until 150... at 200 one is back.
        assert_eq!(lp.window_full(0, 200), None);
        lp.transmit(0, 200, 100, 100, 3, 3, false, false, false);
        assert_eq!(lp.window_full(0, 300), None);
        lp.rate[0] = ErrorRate::PerPacket(1.0);
        lp.transmit(0, 300, 100, 100, 4, 4, false, false, false);
        lp.transmit(0, 400, 100, 100, 5, 5, false, false, false);
        assert_eq!(lp.window_full(0, 500), Some(u64::MAX));
    }

    #[test]
    fn an_escape_shows_only_in_the_cumulative_crc() {
        let mut lp = protocol(1.0, 8);
        let mut cfg = (*lp.cfg).clone();
        cfg.crc_escape_probability = 1.0;
        lp.cfg = Arc::new(cfg);
        assert_eq!(lp.transmit(0, 0, 100, 100, 1, 42, false, false, false), Fate::Accepted);
        assert_eq!(lp.tally.crc_escapes, 1);
        assert_eq!(lp.crc_mismatches(|_| true), vec![0]);
    }

    #[test]
    fn bit_error_rates_grow_with_the_packet() {
        let r = ErrorRate::PerBit(1e-6);
        let (short, long) = (r.packet_probability(32), r.packet_probability(270));
        assert!((long - 270.0 * 8.0 * 1e-6).abs() < 1e-5 && short < long);
    }

    #[test]
    fn a_link_that_is_down_accepts_nothing_and_its_packets_wait_for_the_time_out() {
        let mut lp = protocol(0.0, 8);
        assert_eq!(lp.transmit(0, 0, 100, 100, 1, 11, false, false, true), Fate::Corrupted(1100));
        // The packet behind it is discarded (go-back-N) and held too.
        assert_eq!(lp.transmit(0, 100, 100, 100, 2, 12, false, false, true), Fate::Discarded);
        assert_eq!(lp.held(0).collect::<Vec<_>>(), [1, 2]);
        assert_eq!((lp.tally.down_link, lp.tally.corrupted), (1, 0), "counted apart from corruptions");
    }
}
