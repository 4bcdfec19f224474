//! `tofusim mpi-bench`: the Intel MPI Benchmarks' (IMB-MPI1) kernels on a
//! simulated machine, timed as IMB times them and reported in its terms
//! (#bytes, #repetitions, t_min/t_max/t_avg in µs, Mbytes/sec = 10⁶ bytes
//! per second).
//!
//! Each kernel is a schedule over the job's ranks ([`crate::rank_placement`]:
//! several per node share its TNIs, and talk through memory), run on the
//! packet engine or the flow model from a synchronised start, as after
//! IMB's barrier:
//! - PingPong: rank 0 sends to rank 1, which sends back; t is half the
//!   round trip (single transfer: the other ranks wait).
//! - PingPing: ranks 0 and 1 send to each other at once; t is the later
//!   of their receives.
//! - Sendrecv: every rank sends to its right neighbour and receives from
//!   its left one (a periodic chain); Mbytes/sec counts 2 messages.
//! - Exchange: every rank sends to both neighbours and receives from both;
//!   Mbytes/sec counts 4 messages.
//! - Allreduce, Reduce, Bcast, Allgather, Alltoall, Barrier: the
//!   collective, by the algorithm an MPI library would pick for its size
//!   (the same default replays use, named in each row) or the one given.
//!
//! t_min, t_max and t_avg are over the participating ranks: each rank's
//! time is its loop's time over the repetitions, as IMB averages. The
//! point-to-point kernels run IMB's repetitions back to back (their MPI
//! layer starts each peer in memory-saving mode and switches it to
//! high-speed buffers after some exchanges, which IMB's average sees); a
//! collective runs once (its schedule costs the same every call, and the
//! model has no noise to average).

use std::ops::ControlFlow;

use serde::Serialize;
use tofusim_comm::replay::{Op, ReplayCollective, ReplayMessage, ReplayProgram, SendMode};
use tofusim_comm::{Algorithm, Operation};

use crate::build::Setup;
use crate::collective::Model;
use crate::comm_model::Modes;
use crate::error::{ConfigError, Result};
use crate::rank_placement::Ranks;


/// The IMB-MPI1 kernels modelled (the enum is the registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Benchmark {
    PingPong,
    PingPing,
    Sendrecv,
    Exchange,
    Allreduce,
    Reduce,
    Bcast,
    Allgather,
    Alltoall,
    Barrier,
    ReduceScatter,
    Gather,
    Scatter,
    Allgatherv,
    Gatherv,
    Scatterv,
    Alltoallv,
    Scan,
    Exscan,
    /// The OSU micro-benchmarks' point-to-point tests.
    OsuLatency,
    OsuBw,
    OsuBibw,
}

/// What a collective kernel runs: an operation of the algorithm library,
/// or one the MPI layer times with its one schedule
/// (`tofusim_comm::mpi_collectives`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CollOp {
    Library(Operation),
    Mpi(&'static str),
}

impl CollOp {
    fn name(self) -> &'static str {
        match self {
            CollOp::Library(op) => op.name(),
            CollOp::Mpi(name) => name,
        }
    }
}

/// How IMB reports a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Two ranks, one time and a bandwidth.
    SingleTransfer,
    /// Every rank; t_min/t_max/t_avg and a bandwidth on t_max.
    ParallelTransfer,
    /// Every rank; t_min/t_max/t_avg.
    Collective,
}

impl Benchmark {
    pub const ALL: [Benchmark; 22] = [
        Benchmark::PingPong,
        Benchmark::PingPing,
        Benchmark::Sendrecv,
        Benchmark::Exchange,
        Benchmark::Allreduce,
        Benchmark::Reduce,
        Benchmark::Bcast,
        Benchmark::Allgather,
        Benchmark::Alltoall,
        Benchmark::Barrier,
        Benchmark::ReduceScatter,
        Benchmark::Gather,
        Benchmark::Scatter,
        Benchmark::Allgatherv,
        Benchmark::Gatherv,
        Benchmark::Scatterv,
        Benchmark::Alltoallv,
        Benchmark::Scan,
        Benchmark::Exscan,
        Benchmark::OsuLatency,
        Benchmark::OsuBw,
        Benchmark::OsuBibw,
    ];

    /// The name IMB prints ("# Benchmarking PingPong").
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::PingPong => "PingPong",
            Benchmark::PingPing => "PingPing",
            Benchmark::Sendrecv => "Sendrecv",
            Benchmark::Exchange => "Exchange",
            Benchmark::Allreduce => "Allreduce",
            Benchmark::Reduce => "Reduce",
            Benchmark::Bcast => "Bcast",
            Benchmark::Allgather => "Allgather",
            Benchmark::Alltoall => "Alltoall",
            Benchmark::Barrier => "Barrier",
            Benchmark::ReduceScatter => "Reduce_scatter",
            Benchmark::Gather => "Gather",
            Benchmark::Scatter => "Scatter",
            Benchmark::Allgatherv => "Allgatherv",
            Benchmark::Gatherv => "Gatherv",
            Benchmark::Scatterv => "Scatterv",
            Benchmark::Alltoallv => "Alltoallv",
            Benchmark::Scan => "Scan",
            Benchmark::Exscan => "Exscan",
            Benchmark::OsuLatency => "osu_latency",
            Benchmark::OsuBw => "osu_bw",
            Benchmark::OsuBibw => "osu_bibw",
        }
    }

    /// Any case, as IMB's command line takes it.
    pub fn parse(name: &str) -> Result<Benchmark> {
        Benchmark::ALL.into_iter().find(|b| b.name().eq_ignore_ascii_case(name)).ok_or_else(|| {
            ConfigError::argument("benchmark", format!("unknown benchmark `{name}`; expected one of: {}", Benchmark::ALL.map(|b| b.name()).join(", ")))
        })
    }

    pub fn kind(self) -> Kind {
        match self {
            Benchmark::PingPong | Benchmark::PingPing | Benchmark::OsuLatency | Benchmark::OsuBw | Benchmark::OsuBibw => Kind::SingleTransfer,
            Benchmark::Sendrecv | Benchmark::Exchange => Kind::ParallelTransfer,
            _ => Kind::Collective,
        }
    }

    /// The collective operation it times. The v-variants run with equal
    /// counts, as IMB runs them: their regular forms.
    fn operation(self) -> Option<CollOp> {
        use CollOp::{Library, Mpi};
        match self {
            Benchmark::Allreduce => Some(Library(Operation::Allreduce)),
            Benchmark::Reduce => Some(Library(Operation::Reduce)),
            Benchmark::Bcast => Some(Library(Operation::Bcast)),
            Benchmark::Allgather | Benchmark::Allgatherv => Some(Library(Operation::Allgather)),
            Benchmark::Alltoall | Benchmark::Alltoallv => Some(Library(Operation::Alltoall)),
            Benchmark::Barrier => Some(Library(Operation::Barrier)),
            Benchmark::ReduceScatter => Some(Library(Operation::ReduceScatter)),
            Benchmark::Gather | Benchmark::Gatherv => Some(Library(Operation::Gather)),
            Benchmark::Scatter | Benchmark::Scatterv => Some(Library(Operation::Scatter)),
            Benchmark::Scan => Some(Mpi("scan")),
            Benchmark::Exscan => Some(Mpi("exscan")),
            Benchmark::PingPong | Benchmark::PingPing | Benchmark::Sendrecv | Benchmark::Exchange => None,
            Benchmark::OsuLatency | Benchmark::OsuBw | Benchmark::OsuBibw => None,
        }
    }

    /// The size the operation is given for IMB's `#bytes`: Reduce_scatter's
    /// is the whole vector, of which each rank gets its share.
    fn operation_bytes(self, bytes: u64, ranks: u32) -> u64 {
        match self {
            Benchmark::ReduceScatter => bytes / ranks.max(1) as u64,
            _ => bytes,
        }
    }

    /// Messages a Mbytes/sec figure counts per rank and call (0: none printed).
    fn messages_counted(self) -> u64 {
        match self {
            Benchmark::PingPong | Benchmark::PingPing => 1,
            Benchmark::Sendrecv => 2,
            Benchmark::Exchange => 4,
            Benchmark::OsuLatency => 1,
            // A window of messages per iteration (both ways for bibw).
            Benchmark::OsuBw => OSU_WINDOW,
            Benchmark::OsuBibw => 2 * OSU_WINDOW,
            _ => 0,
        }
    }
}

/// IMB's default message sizes: 0, then 2^0 … 2^22 bytes (`-msglog 0:22`).
pub fn imb_sizes(min_log: u32, max_log: u32) -> Vec<u64> {
    std::iter::once(0).chain((min_log..=max_log).map(|k| 1u64 << k)).collect()
}

/// Largest message size a benchmark takes (IMB's own limit is 2^30 bytes).
pub const MAX_SIZE_BYTES: u64 = 1 << 30;

/// A `tofusim mpi-bench` request.
#[derive(Clone, Debug)]
pub struct BenchRequest {
    pub benchmark: Benchmark,
    pub system: String,
    pub ranks: Ranks,
    /// Message sizes, bytes, in order (IMB's: [`imb_sizes`]).
    pub sizes: Vec<u64>,
    /// The collective algorithm (`None`: the MPI library's choice per size).
    pub algorithm: Option<Algorithm>,
    /// Whose collective rules choose the algorithm (`None`: the system
    /// generation's library).
    pub library: Option<tofusim_comm::library::Library>,
    /// Packet engine, or the flow model event by event.
    pub model: Model,
    pub modes: Modes,
    pub seed: u64,
    /// Wall-time budget of each packet-engine run, minutes (`None`: none).
    pub max_minutes: Option<f64>,
    /// Collectives over several ranks per node run flat over every rank
    /// instead of in their node-leader form.
    pub flat: bool,
}

/// One row of IMB's table.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct BenchRow {
    pub bytes: u64,
    /// Calls simulated back to back for the row: IMB's count for the
    /// point-to-point kernels (1,000, fewer above 40 KB), one for a
    /// collective ([`repetitions`]).
    pub repetitions: u32,
    /// Over the participating ranks: each rank's time for one call, µs.
    pub t_min_us: f64,
    pub t_max_us: f64,
    pub t_avg_us: f64,
    /// IMB's bandwidth (10⁶ bytes per second) for the point-to-point
    /// kernels: the bytes of the messages a rank sends per call over
    /// t_max (PingPong: over t). `None` for the collectives.
    pub mbytes_per_sec: Option<f64>,
    /// The algorithm the collective ran with (`None`: point-to-point).
    pub algorithm: Option<String>,
    /// The library's own algorithm, where tofusim runs a stand-in for it.
    pub stands_in_for: Option<String>,
    /// Why it ran: the library's rule, or `given (--algo)`.
    pub rule: Option<String>,
    /// Every step ran (false after a deadlock or Ctrl-C).
    pub complete: bool,
    /// Packets that crossed the network (packet engine; messages between
    /// ranks of one node move none).
    pub packets_delivered: Option<u64>,
    /// Timed as one call in the flow model's lockstep rounds (a full
    /// machine: the schedule was too large to list). The collective's
    /// network and host costs, without the MPI layer's per-call software;
    /// t_min and t_avg are the first and the mean rank's finish (with
    /// several ranks per node: over the nodes, each node's last rank).
    pub rounds: bool,
}

/// `tofusim mpi-bench`'s result: the benchmark's table and what ran it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct BenchResult {
    /// The benchmark as IMB names it (`PingPong`, `Allreduce`, …).
    pub benchmark: String,
    /// `single-transfer`, `parallel-transfer` or `collective`: which columns IMB prints.
    pub kind: &'static str,
    pub system: String,
    /// Ranks taking part (`#processes` in IMB's header), of `ranks` placed.
    pub processes: u32,
    pub ranks: u32,
    pub ranks_per_node: u32,
    pub placement: &'static str,
    pub model: Model,
    /// The MPI library whose rules chose the collective algorithms.
    pub library: tofusim_comm::library::Library,
    /// Whose MPI software the point-to-point calls model (their protocol
    /// limits and costs), and whether it is the system's own.
    pub mpi_software: Option<crate::replay::MpiSoftware>,
    pub rows: Vec<BenchRow>,
    /// Stopped by Ctrl-C before every size ran (the rows are those done).
    pub interrupted: bool,
    pub wall_seconds: f64,
}

impl BenchRequest {
    /// The request the Python API hands over as JSON (each value's type
    /// checked there): every key checked here once, absent keys taking the
    /// command's defaults (IMB's sizes, a rank per node, the packet engine).
    pub fn from_json(spec: &str) -> Result<BenchRequest> {
        let v = crate::request_json::Fields::parse(spec)?;
        let text = |k: &str| v.text(k);
        let benchmark = Benchmark::parse(&text("benchmark"))?;
        let sizes = match v.get("sizes") {
            None | Some(serde_json::Value::Null) => imb_sizes(0, 22),
            Some(serde_json::Value::Array(a)) => a
                .iter()
                .map(|x| x.as_u64())
                .collect::<Option<Vec<u64>>>()
                .ok_or_else(|| ConfigError::argument("sizes", "expected message sizes in bytes (whole numbers)"))?,
            Some(_) => return Err(ConfigError::argument("sizes", "expected a list of message sizes in bytes")),
        };
        let algorithm = match text("algo").as_str() {
            "" => None,
            name => Some(Algorithm::named(name).ok_or_else(|| ConfigError::argument("algo", format!("unknown algorithm `{name}`; `tofusim coll --list` lists them")))?),
        };
        let library = v.library()?;
        let model = match text("model").as_str() {
            "" | "packet" => Model::Packet,
            "flow" => Model::FlowEvents,
            m => return Err(ConfigError::argument("--model", format!("unknown model `{m}`; expected packet or flow"))),
        };
        Ok(BenchRequest {
            benchmark,
            system: text("system"),
            ranks: v.ranks()?,
            sizes,
            algorithm,
            library,
            model,
            modes: Modes::default(),
            seed: v.whole("seed", 1)?,
            flat: v.flag("flat"),
            max_minutes: v.max_minutes()?,
        })
    }
}


fn check(req: &BenchRequest, ranks: u32) -> Result<()> {
    if req.sizes.is_empty() {
        return Err(ConfigError::argument("sizes", "expected at least one message size"));
    }
    if let Some(&b) = req.sizes.iter().find(|&&b| b > MAX_SIZE_BYTES) {
        return Err(ConfigError::argument("sizes", format!("{b} bytes: above the {MAX_SIZE_BYTES} (1 GiB) a benchmark message may have")));
    }
    if !matches!(req.model, Model::Packet | Model::FlowEvents | Model::Flow) {
        return Err(ConfigError::argument("--model", "mpi-bench runs on the packet engine or the flow model (flow: event by event, or a collective too large to list as one call in lockstep rounds)"));
    }
    if ranks < 2 {
        return Err(ConfigError::argument("system", format!("{} needs at least 2 ranks; the job has {ranks}", req.benchmark.name())));
    }
    if req.algorithm.is_some() && req.benchmark.operation().is_none() {
        return Err(ConfigError::argument("algo", format!("{} is point-to-point: it has no collective algorithm", req.benchmark.name())));
    }
    Ok(())
}

/// The MPI program of kernel `b` over `ranks` ranks with messages (or a
/// collective vector) of `bytes`: the calls IMB makes, in its order.
fn program(b: Benchmark, ranks: u32, bytes: u64, algorithm: Option<Algorithm>, reps: u32) -> ReplayProgram {
    let mut p = ReplayProgram { ranks, messages: Vec::new(), collectives: Vec::new(), programs: vec![Vec::new(); ranks as usize] };
    let message = |p: &mut ReplayProgram, src: u32, dst: u32| {
        p.messages.push(ReplayMessage { src, dst, bytes, mode: SendMode::Standard });
        (p.messages.len() - 1) as u32
    };
    // Each repetition's calls after the last one's, their requests numbered apart.
    for rep in 0..reps as u64 {
        let (q1, q2) = (2 * rep + 1, 2 * rep + 2);
        match b {
            // MPI_Send, then MPI_Recv of the reply.
            Benchmark::PingPong => {
                let (ping, pong) = (message(&mut p, 0, 1), message(&mut p, 1, 0));
                p.programs[0].extend([Op::Send { msg: ping, request: None }, Op::Recv { msg: pong, request: None }]);
                p.programs[1].extend([Op::Recv { msg: ping, request: None }, Op::Send { msg: pong, request: None }]);
            }
            // MPI_Isend, MPI_Recv, MPI_Wait on both ranks at once.
            Benchmark::PingPing => {
                let (a, b) = (message(&mut p, 0, 1), message(&mut p, 1, 0));
                for (r, out, inn) in [(0, a, b), (1, b, a)] {
                    p.programs[r].extend([Op::Send { msg: out, request: Some(q1) }, Op::Recv { msg: inn, request: None }, Op::Wait(vec![q1])]);
                }
            }
            // MPI_Sendrecv: to the right, from the left, on a periodic chain.
            Benchmark::Sendrecv => {
                let right: Vec<u32> = (0..ranks).map(|r| message(&mut p, r, (r + 1) % ranks)).collect();
                for r in 0..ranks {
                    let from_left = right[((r + ranks - 1) % ranks) as usize];
                    p.programs[r as usize].extend([Op::Send { msg: right[r as usize], request: Some(q1) }, Op::Recv { msg: from_left, request: Some(q2) }, Op::Wait(vec![q1, q2])]);
                }
            }
            // MPI_Isend to both neighbours, MPI_Recv from both, MPI_Waitall.
            Benchmark::Exchange => {
                let left: Vec<u32> = (0..ranks).map(|r| message(&mut p, r, (r + ranks - 1) % ranks)).collect();
                let right: Vec<u32> = (0..ranks).map(|r| message(&mut p, r, (r + 1) % ranks)).collect();
                for r in 0..ranks {
                    let (l, rt) = (((r + ranks - 1) % ranks) as usize, ((r + 1) % ranks) as usize);
                    p.programs[r as usize].extend([
                        Op::Send { msg: left[r as usize], request: Some(q1) },
                        Op::Send { msg: right[r as usize], request: Some(q2) },
                        Op::Recv { msg: right[l], request: None },
                        Op::Recv { msg: left[rt], request: None },
                        Op::Wait(vec![q1, q2]),
                    ]);
                }
            }
            // A blocking round trip per iteration, as PingPong.
            Benchmark::OsuLatency => {
                let (ping, pong) = (message(&mut p, 0, 1), message(&mut p, 1, 0));
                p.programs[0].extend([Op::Send { msg: ping, request: None }, Op::Recv { msg: pong, request: None }]);
                p.programs[1].extend([Op::Recv { msg: ping, request: None }, Op::Send { msg: pong, request: None }]);
            }
            // A window of MPI_Isend (bw: then a 4-byte reply) or of
            // MPI_Isend and MPI_Irecv both ways (bibw), then MPI_Waitall.
            Benchmark::OsuBw | Benchmark::OsuBibw => {
                let both = b == Benchmark::OsuBibw;
                let base = 1000 * rep + 1;
                let mut waits = [Vec::new(), Vec::new()];
                for w in 0..OSU_WINDOW {
                    let m = message(&mut p, 0, 1);
                    p.programs[1].push(Op::Recv { msg: m, request: Some(base + 2 * w) });
                    waits[1].push(base + 2 * w);
                    p.programs[0].push(Op::Send { msg: m, request: Some(base + 2 * w) });
                    waits[0].push(base + 2 * w);
                    if both {
                        let back = message(&mut p, 1, 0);
                        p.programs[0].push(Op::Recv { msg: back, request: Some(base + 2 * w + 1) });
                        waits[0].push(base + 2 * w + 1);
                        p.programs[1].push(Op::Send { msg: back, request: Some(base + 2 * w + 1) });
                        waits[1].push(base + 2 * w + 1);
                    }
                }
                let [w0, w1] = waits;
                p.programs[0].push(Op::Wait(w0));
                p.programs[1].push(Op::Wait(w1));
                if !both {
                    p.messages.push(ReplayMessage { src: 1, dst: 0, bytes: 4, mode: SendMode::Standard });
                    let ack = (p.messages.len() - 1) as u32;
                    p.programs[1].push(Op::Send { msg: ack, request: None });
                    p.programs[0].push(Op::Recv { msg: ack, request: None });
                }
            }
            _ => {
                let op = b.operation().expect("a collective");
                let algorithm = algorithm.expect("a collective's algorithm is settled before");
                let k = p.collectives.len() as u32;
                let size_bytes = b.operation_bytes(bytes, ranks);
                p.collectives.push(ReplayCollective { op: op.name().to_string(), algorithm: algorithm.name().to_string(), members: (0..ranks).collect(), root: 0, size_bytes });
                for prog in &mut p.programs {
                    prog.push(Op::Collective(k));
                }
            }
        }
    }
    p
}

/// The OSU bandwidth tests' window: messages in flight per iteration.
const OSU_WINDOW: u64 = 64;

/// The OSU tests' iterations and warm-up iterations (not timed) at
/// `bytes`: their defaults (osu_latency 10,000 and 100, 1,000 and 10
/// above 8 KiB; osu_bw and osu_bibw 100 and 10, 20 and 2 above 8 KiB).
fn osu_loop(b: Benchmark, bytes: u64) -> Option<(u32, u32)> {
    let large = bytes > 8192;
    match b {
        Benchmark::OsuLatency => Some(if large { (1000, 10) } else { (10_000, 100) }),
        Benchmark::OsuBw | Benchmark::OsuBibw => Some(if large { (20, 2) } else { (100, 10) }),
        _ => None,
    }
}

/// IMB's message volume per sample: a size runs at most 1,000 times and
/// fewer above 40 KB, so that a sample moves about 40 MB (IMB-MPI1's
/// `MSGSPERSAMPLE` and `OVERALL_VOL`).
const IMB_MSGS_PER_SAMPLE: u64 = 1000;
const IMB_OVERALL_VOL_BYTES: u64 = 40 << 20;

/// Most messages a benchmark's repetitions may add up to in one run (a
/// parallel kernel on many ranks runs fewer repetitions than IMB would).
const MAX_REPEATED_MESSAGES: u64 = 2_000_000;

/// Calls simulated for kernel `b` at `bytes` on `ranks` ranks: IMB's
/// count for the point-to-point kernels (their MPI layer switches a peer
/// to high-speed buffers after a number of exchanges, so the first calls
/// are slower and IMB's average sees it), bounded by
/// [`MAX_REPEATED_MESSAGES`]; one for a collective (its schedule's cost is
/// the same every call: the model has no noise to average).
pub fn repetitions(b: Benchmark, ranks: u32, bytes: u64) -> u32 {
    if let Some((iterations, _)) = osu_loop(b, bytes) {
        return iterations;
    }
    let per_call = match b {
        Benchmark::PingPong | Benchmark::PingPing => 2,
        Benchmark::Sendrecv => ranks as u64,
        Benchmark::Exchange => 2 * ranks as u64,
        _ => return 1,
    };
    let imb = IMB_MSGS_PER_SAMPLE.min((IMB_OVERALL_VOL_BYTES / bytes.max(1)).max(1));
    imb.min((MAX_REPEATED_MESSAGES / per_call).max(1)) as u32
}

/// Bytes a replayed message costs while its schedule runs: its send and
/// receive steps with their spans and dependencies, its matching and
/// execution state, the MPI layer's protocol steps (measured: about 150;
/// a margin for the packets in flight).
const BYTES_PER_MESSAGE: u64 = 400;

/// The messages of kernel `b` at `bytes` over `ranks` ranks, estimated
/// before its schedule is written (a rendezvous doubles them), and the
/// memory they take, each held against its limit: an all-to-all of a
/// million ranks is refused here, not by the allocator.
/// The way out for a collective with a lockstep rounds form.
fn rounds_hint(b: Benchmark, algorithm: Option<Algorithm>) -> &'static str {
    match (b.operation(), algorithm) {
        (Some(CollOp::Library(op)), Some(a)) if tofusim_comm::rounds::has_rounds(op, a) => {
            ", or the flow model (--model flow), which times one call in lockstep rounds (one rank per node, or node leaders of block or cyclic placement)"
        }
        _ => "",
    }
}

fn check_size(b: Benchmark, ranks: u32, bytes: u64, algorithm: Option<Algorithm>, reps: u32) -> Result<()> {
    let p = ranks as u64;
    let messages = match (b.operation(), algorithm) {
        (Some(CollOp::Library(op)), Some(a)) => crate::collective::messages_estimate(Some(op), a, bytes, None, p),
        (Some(CollOp::Mpi(_)), Some(a)) => crate::collective::messages_estimate(None, a, bytes, None, p),
        _ => match b {
            Benchmark::PingPong | Benchmark::PingPing | Benchmark::OsuLatency => 2,
            Benchmark::OsuBw | Benchmark::OsuBibw => 2 * OSU_WINDOW + 1,
            Benchmark::Sendrecv => p,
            _ => 2 * p,
        }
        .saturating_mul(3)
        .saturating_mul(reps as u64),
    };
    if messages > crate::collective::MAX_SCHEDULE_MESSAGES {
        return Err(ConfigError::argument(
            "ppn",
            format!("{} of {bytes} bytes over {ranks} ranks: about {messages} messages, more than the {} a schedule may hold; fewer ranks (--ppn, --system){}", b.name(), crate::collective::MAX_SCHEDULE_MESSAGES, rounds_hint(b, algorithm)),
        ));
    }
    // Bruck's messages gather every block whose index has the step's bit
    // set: p/2 spans of 16 bytes each.
    let spans_bytes = if algorithm == Some(Algorithm::Bruck) { 8 * p } else { 0 };
    let need = messages.saturating_mul(BYTES_PER_MESSAGE + spans_bytes);
    if let Some((limit, what)) = tofusim_packet::budget::limit(None) {
        if need > limit {
            return Err(ConfigError::argument(
                "ppn",
                format!("{} of {bytes} bytes over {ranks} ranks: about {messages} messages needing {}, more than {what} ({}); fewer ranks (--ppn, --system)", b.name(), tofusim_packet::budget::gib(need), tofusim_packet::budget::gib(limit)),
            ));
        }
    }
    Ok(())
}

/// One row: the kernel at `bytes`, replayed as an MPI program on the
/// request's system and ranks (the MPI layer's protocols for the
/// point-to-point calls, the algorithm's schedule for a collective).
fn row(req: &BenchRequest, system: &Setup, ranks: u32, leaders: u32, bytes: u64, progress: tofusim_packet::Progress) -> Result<Option<(BenchRow, crate::replay::MpiSoftware)>> {
    let b = req.benchmark;
    // (The library's own algorithm where a stand-in runs, the rule.)
    let mut why: Option<(Option<String>, String)> = None;
    let algorithm = match b.operation() {
        None => None,
        // A zero-count collective moves nothing: MPI libraries return at once.
        Some(op) if bytes == 0 && op != CollOp::Library(Operation::Barrier) => {
            let row = BenchRow { bytes, repetitions: 1, t_min_us: 0.0, t_max_us: 0.0, t_avg_us: 0.0, mbytes_per_sec: None, algorithm: None, stands_in_for: None, rule: None, complete: true, packets_delivered: Some(0), rounds: false };
            return Ok(Some((row, crate::replay::MpiSoftware { profile: "", native: true, eager_limit_bytes: 0, note: String::new() })));
        }
        Some(op) => {
            // Among node leaders the algorithm runs on one rank per node:
            // the library picks it for that many.
            let on_leaders = !req.flat
                && leaders < ranks
                && matches!(op, CollOp::Library(Operation::Barrier | Operation::Bcast | Operation::Reduce | Operation::Allreduce));
            let pick_for = if on_leaders { leaders } else { ranks };
            // The benchmark's communicator is every rank in rank order: a
            // torus where the placement keeps the system's shape.
            let generation = system.built.system.generation;
            let library = req.library.unwrap_or_else(|| generation.mpi_library());
            let grids = crate::replay::world_grids(system, &req.ranks, false);
            let grid = if on_leaders { grids.leaders } else { grids.flat };
            let grid = grid.filter(|g| g.ranks() == pick_for);
            let comm = tofusim_comm::library::Communicator::on_grid(pick_for, grid.as_ref(), generation.barrier_hardware().is_some());
            // The operation's own size (Reduce_scatter: each rank's block).
            let choice = library.choose(op.name(), b.operation_bytes(bytes, ranks), comm).expect("every benchmarked operation has a rule in every library");
            let default = Algorithm::named(choice.algorithm).expect("the libraries choose algorithms");
            let algorithm = req.algorithm.unwrap_or(default);
            why = Some(match req.algorithm {
                Some(_) => (None, "given (--algo)".to_string()),
                None => (choice.stands_in_for.map(str::to_string), format!("{library}: {}", choice.rule)),
            });
            match op {
                CollOp::Library(op) => Some(Algorithm::parse_named(op.name(), algorithm.name()).map_err(|e| ConfigError::argument(e.key, e.message))?.1),
                // The MPI layer times these with one schedule each.
                CollOp::Mpi(name) if algorithm != default => {
                    return Err(ConfigError::argument("algo", format!("{} ({name}) runs one algorithm here, {}; got {}", b.name(), default.name(), algorithm.name())));
                }
                CollOp::Mpi(_) => Some(algorithm),
            }
        }
    };
    let reps = repetitions(b, ranks, bytes);
    if let Err(too_large) = check_size(b, ranks, bytes, algorithm, reps) {
        // A full machine on the flow model: one call in lockstep rounds,
        // where the algorithm has them.
        return match (req.model, b.operation(), algorithm) {
            (Model::FlowEvents, Some(CollOp::Library(op)), Some(a)) if rounds_apply(req, op, a) => rounds_row(req, b, op, a, bytes, ranks, why, progress),
            _ => Err(too_large),
        };
    }
    let spec = crate::replay::ReplaySpec {
        system: req.system.clone(),
        system_toml: None,
        mpi: Default::default(),
        order: None,
        ranks: req.ranks.clone(),
        node_leaders: !req.flat,
        model: req.model,
        compute_scale: 1.0,
        seed: req.seed,
        counter_cycles: 0,
        max_minutes: req.max_minutes,
    };
    // The OSU tests time their loop after untimed warm-up iterations: the
    // warm-up alone is replayed too and its time taken off.
    let warmup = osu_loop(b, bytes).map_or(0, |(_, w)| w);
    let replay = |p: ReplayProgram, progress: tofusim_packet::Progress| crate::replay::run_on_system(&p, &spec, system.clone(), progress, std::time::Instant::now());
    let r = replay(program(b, ranks, bytes, algorithm, warmup + reps), progress)?;
    if !r.complete && r.run.as_ref().is_some_and(|x| x.interrupted) {
        return Ok(None);
    }
    let warm: Vec<f64> = if warmup > 0 {
        let w = replay(program(b, ranks, bytes, algorithm, warmup), progress)?;
        if !w.complete {
            return Ok(None);
        }
        w.per_rank.iter().map(|x| x.end_seconds).collect()
    } else {
        vec![0.0; r.per_rank.len()]
    };
    // Per rank, the mean time of a call (IMB's t: the loop's time over its repetitions).
    let ends: Vec<f64> = r.per_rank.iter().zip(&warm).map(|(x, w)| (x.end_seconds - w) / reps as f64).collect();
    let part: &[f64] = match b.kind() {
        Kind::SingleTransfer => &ends[..2],
        Kind::ParallelTransfer | Kind::Collective => &ends,
    };
    let us = |s: f64| s * 1e6;
    let (mut t_min, mut t_max) = (part.iter().copied().fold(f64::INFINITY, f64::min), part.iter().copied().fold(0.0, f64::max));
    let mut t_avg = part.iter().sum::<f64>() / part.len() as f64;
    if matches!(b, Benchmark::PingPong | Benchmark::OsuLatency) {
        // Half the round trip, as IMB and OSU report it.
        let t = ends[0] / 2.0;
        (t_min, t_max, t_avg) = (t, t, t);
    }
    let counted = b.messages_counted();
    let mbytes_per_sec = (counted > 0).then(|| if t_max > 0.0 { (counted * bytes) as f64 / us(t_max) } else { 0.0 });
    let row = BenchRow {
        bytes,
        repetitions: reps,
        t_min_us: us(t_min),
        t_max_us: us(t_max),
        t_avg_us: us(t_avg),
        mbytes_per_sec,
        algorithm: algorithm.map(|a| a.name().to_string()),
        stands_in_for: why.as_ref().and_then(|w| w.0.clone()),
        rule: why.map(|w| w.1),
        complete: r.complete,
        packets_delivered: r.run.as_ref().map(|x| x.packets_delivered),
        rounds: false,
    };
    Ok(Some((row, r.mpi_software)))
}

/// Whether the rounds form runs `op` with `algorithm` over the request's
/// ranks: the algorithm has rounds, and the ranks sit one per node in the
/// communicator's order, or several per node (block or cyclic) run the
/// operation among node leaders.
fn rounds_apply(req: &BenchRequest, op: Operation, algorithm: Algorithm) -> bool {
    let leaders = !req.flat && !matches!(req.ranks.placement, crate::rank_placement::RankPlacement::Map(_)) && matches!(op, Operation::Barrier | Operation::Bcast | Operation::Reduce | Operation::Allreduce);
    tofusim_comm::rounds::has_rounds(op, algorithm) && (req.ranks.is_one_per_node() || leaders)
}

/// One collective call at `bytes` timed by the flow model's lockstep
/// rounds over every rank of the request (`tofusim coll --model
/// flow-rounds`): the row of a machine too large for a schedule.
#[allow(clippy::too_many_arguments)]
fn rounds_row(req: &BenchRequest, b: Benchmark, op: Operation, algorithm: Algorithm, bytes: u64, ranks: u32, why: Option<(Option<String>, String)>, progress: tofusim_packet::Progress) -> Result<Option<(BenchRow, crate::replay::MpiSoftware)>> {
    let spec = crate::collective::CollectiveSpec {
        op,
        algorithm,
        size_bytes: b.operation_bytes(bytes, ranks),
        system: req.system.clone(),
        root: 0,
        segment_bytes: None,
        tnis: None,
        modes: req.modes,
        verify: false,
        seed: req.seed,
        model: Model::FlowRounds,
        max_minutes: req.max_minutes,
        counter_cycles: 0,
        steps: false,
        trees: None,
        ranks: req.ranks.clone(),
        flat: req.flat,
        library: None,
        comm: Default::default(),
    };
    let r = crate::collective::run(&spec, progress)?;
    let Some(timed) = r.flow.as_ref().and_then(|f| f.rounds.as_ref()) else {
        // Ctrl-C before the rounds ended.
        return Ok(None);
    };
    let us = |s: f64| s * 1e6;
    let row = BenchRow {
        bytes,
        repetitions: 1,
        t_min_us: us(timed.rank_min_seconds),
        t_max_us: us(timed.time_seconds),
        t_avg_us: us(timed.rank_mean_seconds),
        mbytes_per_sec: None,
        algorithm: Some(algorithm.name().to_string()),
        stands_in_for: why.as_ref().and_then(|w| w.0.clone()),
        rule: why.map(|w| w.1),
        complete: r.complete,
        packets_delivered: None,
        rounds: true,
    };
    // No MPI software profile: the rounds carry none (the row says so).
    let software = crate::replay::MpiSoftware { profile: "", native: true, eager_limit_bytes: 0, note: String::new() };
    Ok(Some((row, software)))
}

/// Runs `req`: every size in order. `progress(done fraction)` may stop it
/// between sizes and inside a run (Ctrl-C); the rows done are kept.
pub fn run(req: &BenchRequest, progress: tofusim_packet::Progress) -> Result<BenchResult> {
    let wall = std::time::Instant::now();
    // The system built once (every size's replay places its ranks on a copy).
    let system = crate::build::checked_setup(&req.system, req.ranks.per_node, &format!("mpi-bench {}", req.benchmark.name()))?;
    let placed = req.ranks.place(system.clone())?;
    let ranks = placed.node_of_rank.len() as u32;
    let leaders = tofusim_comm::hierarchical::leaders(&placed.node_of_rank).0.len() as u32;
    check(req, ranks)?;
    let barrier = req.benchmark == Benchmark::Barrier;
    let sizes: &[u64] = if barrier { &[0] } else { &req.sizes };
    let mut rows = Vec::with_capacity(sizes.len());
    let mut interrupted = false;
    let mut mpi_software = None;
    for (i, &bytes) in sizes.iter().enumerate() {
        if progress(i as f64 / sizes.len() as f64).is_break() {
            interrupted = true;
            break;
        }
        // Each run reports its own progress within the row's share.
        let mut inner = |f: f64| progress((i as f64 + f) / sizes.len() as f64);
        match row(req, &system, ranks, leaders, bytes, &mut inner)? {
            Some((r, software)) => {
                if !software.profile.is_empty() {
                    mpi_software = Some(software);
                }
                let stopped = !r.complete;
                rows.push(r);
                if stopped && progress(i as f64 / sizes.len() as f64).is_break() {
                    interrupted = true;
                    break;
                }
            }
            None => {
                interrupted = true;
                break;
            }
        }
    }
    let _ = progress(1.0);
    Ok(BenchResult {
        benchmark: req.benchmark.name().to_string(),
        kind: match req.benchmark.kind() {
            Kind::SingleTransfer => "single-transfer",
            Kind::ParallelTransfer => "parallel-transfer",
            Kind::Collective => "collective",
        },
        system: req.system.clone(),
        processes: if req.benchmark.kind() == Kind::SingleTransfer { 2 } else { ranks },
        ranks,
        ranks_per_node: req.ranks.per_node,
        placement: req.ranks.placement.name(),
        model: req.model,
        library: req.library.unwrap_or_else(|| system.built.system.generation.mpi_library()),
        mpi_software,
        rows,
        interrupted,
        wall_seconds: wall.elapsed().as_secs_f64(),
    })
}

/// `progress` that never stops (tests, the examples).
pub fn never(_: f64) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(b: Benchmark, system: &str, ppn: u64, sizes: Vec<u64>) -> BenchRequest {
        BenchRequest {
            benchmark: b,
            system: system.into(),
            ranks: Ranks::new(ppn, crate::rank_placement::RankPlacement::Block).unwrap(),
            sizes,
            algorithm: None,
            library: None,
            model: Model::Packet,
            modes: Modes::default(),
            seed: 1,
            max_minutes: None,
            flat: false,
        }
    }

    #[test]
    fn pingpong_is_half_a_round_trip_and_its_bandwidth_grows_with_size() {
        let r = run(&req(Benchmark::PingPong, "k:2x3x2", 1, vec![0, 1024, 1 << 20]), &mut never).unwrap();
        assert_eq!((r.processes, r.rows.len()), (2, 3));
        let small = &r.rows[0];
        assert!(small.t_max_us > 0.5 && small.t_max_us < 5.0, "{small:?}");
        assert_eq!(small.t_min_us, small.t_max_us);
        let big = &r.rows[2];
        let bw = big.mbytes_per_sec.unwrap();
        assert!(bw > 2000.0 && bw < 5000.0, "K put bandwidth 1 MiB: {bw} MB/s");
    }

    #[test]
    fn collectives_name_their_algorithm_per_size() {
        let r = run(&req(Benchmark::Allreduce, "bgl:2x2x2", 2, vec![0, 8, 1 << 16]), &mut never).unwrap();
        assert_eq!(r.processes, 16);
        assert_eq!(r.rows[0].t_max_us, 0.0);
        assert_eq!(r.rows[1].algorithm.as_deref(), Some("recursive-doubling"));
        assert_eq!(r.rows[2].algorithm.as_deref(), Some("rabenseifner"));
        assert!(r.rows[2].t_min_us <= r.rows[2].t_avg_us && r.rows[2].t_avg_us <= r.rows[2].t_max_us);
        let barrier = run(&req(Benchmark::Barrier, "bgl:2x2x2", 1, vec![0, 8]), &mut never).unwrap();
        assert_eq!(barrier.rows.len(), 1, "a barrier has one row");
        assert!(barrier.rows[0].t_max_us > 0.0);
    }

    #[test]
    fn refusals_name_the_argument() {
        let mut bad = req(Benchmark::PingPong, "k:2x3x2", 1, vec![8]);
        bad.algorithm = Some(Algorithm::Ring);
        assert!(run(&bad, &mut never).unwrap_err().to_string().contains("algo"));
        let big = req(Benchmark::Sendrecv, "k:2x3x2", 1, vec![2 << 30]);
        assert!(run(&big, &mut never).unwrap_err().to_string().contains("1 GiB"));
        assert!(Benchmark::parse("pingpong").is_ok() && Benchmark::parse("nope").is_err());
    }
}
