//! The router as hardware units (as gem5 Garnet and SuperSim build theirs),
//! one module each, their state struct-of-arrays over every router of a
//! partition:
//! - [`input_unit`]: VC buffers and injection FIFOs as linked queues, the
//!   chunks each holds, the receiver→sender paths in use, and the
//!   per-output index of the heads that could use each output;
//! - [`route`]: route computation — a head packet's candidate outputs
//!   (minimal adaptive ports and the escape port) from the routing function;
//! - [`select`]: output and VC selection — JSQ among free dynamic VCs, the
//!   escape VC's flow-control rule (bubble, dateline pair, hop class);
//! - [`switch`]: switch arbitration — per receiver (priority VC, modified
//!   SLQ or random, up to the free paths), then per sender (priority, in
//!   network over injection, SLQ or random);
//! - [`output_unit`]: link serialisation and downstream tokens, the
//!   reception path, and where a winner's events go (the next router, the
//!   node, another partition's mail), with the link protocol
//!   ([`link_protocol`]: errors, retransmission FIFO, go-back-N, link CRC).
//!
//! The order of the stages is written once, in [`Router::arbitrate`], run
//! once per cycle at every router something happened to ([S:004]):
//!
//! 1. **Per packet at a VC head** — route choice. At the destination: the
//!    reception path of its input. Otherwise, in adaptive mode, the dynamic
//!    (port, VC) with the most downstream tokens among those whose link is
//!    free and which can take a full-sized packet (JSQ on 2-bit token
//!    ranges, random ties); failing that, the escape VC on the dimension-order
//!    port if its flow-control rule allows (bubble: 1 full packet to continue
//!    in the same direction, 2 to enter; dateline pair: the low/high VC by
//!    dateline crossing). Deterministic mode uses only the escape route.
//! 2. **Per receiver** — which VC heads of an input may request: the
//!    priority VC first, then the fullest VC (modified SLQ) on a fraction of
//!    arbitrations and a random order otherwise, up to the free
//!    receiver→sender paths.
//! 3. **Per sender** — one winner per output: priority packets first, then
//!    in-network packets over injection on `network_priority` of the
//!    arbitrations, then SLQ or random.
//!
//! Losers try again in a second and third round against the outputs still
//! free (the hardware retries on the next cycle).
//!
//! A router model (BG/L, Tofu, Aries, a fat-tree switch) is these units
//! with its parameters ([`crate::config::RouterParams`]).

pub(crate) mod input_unit;
pub(crate) mod link_protocol;
pub(crate) mod output_unit;
pub(crate) mod route;
mod select;
mod switch;

pub(crate) use input_unit::InputUnits;
pub(crate) use output_unit::OutputUnits;

use rand::SeedableRng;
use tofusim_des::TimeWheel;

use crate::event::Ev;
use crate::limits::Cause;
use crate::layout::{QueueSet, WideQueues};
use crate::mail::Mail;
use crate::net::Net;
use crate::nic::Nic;
use crate::packet::Pool;
use crate::stats::Stats;
use switch::{Request, EJECT, WITHDRAWN};
pub(crate) use switch::MAX_VCS;

/// What the router units touch outside themselves while they arbitrate:
/// the network's fixed description, the packets, the event wheel, the
/// node side (host interface), the statistics and the partition mail.
pub(crate) struct Env<'a> {
    pub net: &'a Net,
    pub pool: &'a mut Pool,
    pub wheel: &'a mut TimeWheel<Ev>,
    pub nic: &'a mut Nic,
    pub stats: &'a mut Stats,
    pub mail: &'a mut Mail,
}

/// Every router of a partition, as units.
pub(crate) struct Router {
    pub inputs: InputUnits,
    pub outputs: OutputUnits,
    /// Per router: its own seeded generator (draws never depend on the
    /// order routers are visited in).
    pub rngs: Vec<rand_pcg::Pcg32>,
    /// Scratch list of one arbitration's requests.
    pub requests: Vec<Request>,
    /// Whether the planted fault has struck (it strikes once, at router 0).
    pub planted_done: bool,
    /// What JSQ saw at its measured decisions with two candidates or more
    /// ([`JsqTally`]).
    pub jsq: JsqTally,
}

/// What JSQ's output choices saw (after the warm-up, choices among two
/// or more free dynamic VCs): how often the best 2-bit token range was
/// held by one candidate alone (the choice then followed the queues, not
/// the random tie-break), and the ranges of every candidate compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsqTally {
    pub choices: u64,
    pub separated: u64,
    /// Candidates compared, by token range (0: under a quarter of the
    /// buffer free … 3: at least three quarters).
    pub ranges: [u64; 4],
}

impl JsqTally {
    /// One choice: `seen` holds its candidates by quarter, 16 bits each
    /// (fewer than 2^16 candidates per choice); `separated`: one of them
    /// alone held the best range. Choices with one candidate are not counted.
    #[inline]
    pub fn note(&mut self, seen: u64, separated: bool) {
        let q = [seen & 0xffff, seen >> 16 & 0xffff, seen >> 32 & 0xffff, seen >> 48];
        if q.iter().sum::<u64>() < 2 {
            return;
        }
        self.choices += 1;
        self.separated += separated as u64;
        for (r, n) in self.ranges.iter_mut().zip(q) {
            *r += n;
        }
    }
}

impl Router {
    pub fn new(net: &Net, own: crate::partition::Ownership) -> Self {
        let seed = net.run.seed;
        let rngs = (0..net.lay.routers)
            .map(|r| {
                rand_pcg::Pcg32::seed_from_u64(
                    seed.wrapping_mul(0x9e3779b97f4a7c15) ^ (r as u64).wrapping_mul(0xd1b54a32d192ed03),
                )
            })
            .collect();
        Router {
            inputs: InputUnits::new(&net.lay, own),
            outputs: OutputUnits::new(net, own),
            rngs,
            requests: Vec::with_capacity(64),
            planted_done: false,
            jsq: JsqTally::default(),
        }
    }

    /// Queue `q` of router `r`: its head cannot go at `t`, for `cause`
    /// ([`crate::limits`]).
    #[inline]
    pub(crate) fn block(&mut self, r: usize, q: u16, t: u64, cause: Cause, net: &Net) {
        self.inputs.block(r * net.lay.queues + q as usize, t, cause, net.run.warmup);
    }

    /// The router's stages, in the order the hardware pipelines them: up to
    /// three rounds of route choice and receiver arbitration
    /// ([`Self::collect_requests`]), sender arbitration per output
    /// ([`Self::sender_arbitration`]), and the winners' traversal of the
    /// crossbar to a link ([`Self::grant_hop`]) or the reception path
    /// ([`Self::grant_eject`]). The node side has filled the injection FIFOs
    /// just before.
    pub(crate) fn arbitrate(&mut self, r: usize, t: u64, env: &mut Env) {
        if env.net.lay.qwords == 1 {
            self.arbitrate_with::<u64>(r, t, env)
        } else if env.net.lay.qwords == 2 {
            self.arbitrate_with::<u128>(r, t, env)
        } else {
            self.arbitrate_with::<WideQueues>(r, t, env)
        }
    }

    /// [`Self::arbitrate`] with queue sets of type `Q`.
    fn arbitrate_with<Q: QueueSet>(&mut self, r: usize, t: u64, env: &mut Env) {
        let mut out_taken: u64 = 0;
        // Outputs free now: only this arbitration's winners take them (and
        // go into `out_taken`) before it ends.
        let free_at_start = self.free_outputs(r, t, env.net.lay.ports);
        let mut q_taken = Q::empty(env.net.lay.qwords);
        // Network inputs whose reception path took a packet this cycle.
        let mut ejected: u64 = 0;
        for _round in 0..3 {
            self.requests.clear();
            self.collect_requests(r, t, free_at_start, out_taken, &q_taken, env);
            if self.requests.is_empty() {
                break;
            }
            let mut granted = false;
            let mut i = 0;
            while i < self.requests.len() {
                let req = self.requests[i];
                i += 1;
                if req.out == WITHDRAWN {
                    self.block(r, req.queue, t, Cause::Arbitration, env.net);
                    continue;
                }
                if req.out == EJECT {
                    // One packet at a time on a network input's reception
                    // path: the VCs of one input that have all arrived
                    // request it together, one wins.
                    let path: u64 = if (req.unit as usize) < env.net.lay.ports { 1 << req.unit } else { 0 };
                    if !q_taken.contains(req.queue as usize) && ejected & path == 0 {
                        self.grant_eject(r, t, req, env);
                        q_taken.insert(req.queue as usize);
                        ejected |= path;
                        granted = true;
                    } else {
                        self.block(r, req.queue, t, Cause::Reception, env.net);
                    }
                    continue;
                }
                if out_taken & (1 << req.out) != 0 {
                    if !q_taken.contains(req.queue as usize) {
                        self.block(r, req.queue, t, Cause::Arbitration, env.net);
                    }
                    continue;
                }
                let winner = self.sender_arbitration(r, req.out, &q_taken, &env.net.params);
                if let Some(w) = winner {
                    self.grant_hop(r, t, w, env);
                    out_taken |= 1 << w.out;
                    q_taken.insert(w.queue as usize);
                    granted = true;
                    if w.queue != req.queue && !q_taken.contains(req.queue as usize) {
                        self.block(r, req.queue, t, Cause::Arbitration, env.net);
                    }
                } else {
                    out_taken |= 1 << req.out;
                }
            }
            if !granted {
                break;
            }
        }
    }
}
