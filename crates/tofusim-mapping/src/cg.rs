//! The communication of the NAS Parallel Benchmark CG (MPI version, as in
//! NPB 3.x `cg.f`: `setup_proc_info`, `setup_submatrix_info`,
//! `conj_grad`), the workload of RMATT's published evaluation
//! ([S:003]).
//!
//! The processes form an `nprows × npcols` grid (`npcols = nprows`, or
//! `2·nprows` when the count is not a square power of two); rank = row ·
//! npcols + column. Each CG iteration (25 per outer iteration):
//! - the row-wise sum of the matrix-vector product: log2(npcols) exchanges
//!   with partners at column distance npcols/2, npcols/4, … (within aligned
//!   blocks), each of the rank's row block (the first one of half of it on
//!   a non-square grid);
//! - the exchange with the transpose process;
//! - two scalar sum-reductions (p·q and r·r), log2(npcols) exchanges of
//!   one double each.
//!
//! Per outer iteration add one more product and transpose (the residual),
//! and three scalar reductions (ρ at the start, the residual norm, and the
//! two-double norm of the main loop).

use crate::comm_list::{CommList, Flow};
use tofusim_comm::{Combine, Rank, Schedule, Span, StepId};

/// NPB problem classes: (order of the matrix `na`, outer iterations).
pub fn class_size(class: char) -> Option<(u64, u32)> {
    Some(match class.to_ascii_uppercase() {
        'S' => (1_400, 15),
        'W' => (7_000, 15),
        'A' => (14_000, 15),
        'B' => (75_000, 75),
        'C' => (150_000, 75),
        'D' => (1_500_000, 100),
        'E' => (9_000_000, 100),
        _ => return None,
    })
}

/// CG iterations per outer iteration (`cgitmax`).
pub const CG_ITERATIONS: u32 = 25;

/// NPB's `nonzer` per class: the generator's nonzeros per sparse vector,
/// from which the benchmark counts its operations (`nonzer·(nonzer+1)`
/// per row).
fn nonzer(class: char) -> Option<u32> {
    Some(match class.to_ascii_uppercase() {
        'S' => 7,
        'W' => 8,
        'A' => 11,
        'B' => 13,
        'C' => 15,
        'D' => 21,
        'E' => 26,
        _ => return None,
    })
}

/// What a node computes with: its peak floating-point rate and its
/// memory bandwidth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeRates {
    pub flops_per_second: f64,
    pub memory_bytes_per_second: f64,
}

/// [PUB] The K computer's node, one SPARC64 VIIIfx: 8 cores × 16 GFLOPS at
/// 2 GHz = 128 GFLOPS peak, 64 GB/s of memory bandwidth (Maruyama et al.,
/// IEEE Micro 30(2), 2010; 10.51 PFLOPS over 82,944 nodes on TOP500).
pub const K_NODE: NodeRates = NodeRates { flops_per_second: 128e9, memory_bytes_per_second: 64e9 };

/// One CG iteration's computation on one process (all processes carry
/// the same share).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgCompute {
    pub flops: f64,
    pub memory_bytes: f64,
    pub seconds: f64,
}

/// One process's part of the CG data decomposition.
#[derive(Clone, Debug)]
struct Proc {
    /// Partners of the row-wise reduction, step 1..=l2npcols.
    reduce_partner: Vec<Rank>,
    /// Elements sent at each reduction step.
    reduce_send: Vec<u64>,
    /// Elements received at each reduction step.
    reduce_recv: Vec<u64>,
    transpose_partner: Rank,
    /// Elements sent to / received from the transpose partner.
    transpose_send: u64,
    transpose_recv: u64,
}

/// The process grid and every process's partners and message lengths.
#[derive(Clone, Debug)]
pub struct CgLayout {
    pub procs: u32,
    pub nprows: u32,
    pub npcols: u32,
    pub na: u64,
    pub outer_iterations: u32,
    /// NPB's `nonzer` for the class.
    pub nonzer: u32,
    procs_info: Vec<Proc>,
}

/// `lo..` split into `parts` blocks, the first `na mod parts` one larger.
fn block(na: u64, parts: u64, k: u64) -> u64 {
    na / parts + u64::from(k < na % parts)
}

impl CgLayout {
    /// `procs` must be a power of two (as NPB CG requires).
    pub fn new(procs: u32, class: char) -> Result<Self, crate::MappingError> {
        let (na, outer_iterations) = class_size(class)
            .ok_or(crate::MappingError::CgClass(class))?;
        if procs == 0 || !procs.is_power_of_two() {
            return Err(crate::MappingError::CgProcs(procs));
        }
        let log2 = procs.trailing_zeros();
        let nprows = 1u32 << (log2 / 2);
        let npcols = procs / nprows;
        let l2npcols = npcols.trailing_zeros() as usize;
        let square = nprows == npcols;
        let procs_info = (0..procs)
            .map(|me| {
                let (row, col) = (me / npcols, me % npcols);
                let rows = block(na, nprows as u64, row as u64);
                let cols = if square {
                    block(na, npcols as u64, col as u64)
                } else {
                    let half = block(na, (npcols / 2) as u64, (col / 2) as u64);
                    if me % 2 == 0 { (half - 1) / 2 + 1 } else { half / 2 }
                };
                let send_len = if square {
                    rows
                } else if me % 2 == 0 {
                    rows.div_ceil(2)
                } else {
                    rows / 2
                };
                let mut div = npcols;
                let mut reduce_partner = Vec::with_capacity(l2npcols);
                for _ in 0..l2npcols {
                    let j = (col + div / 2) % div + col / div * div;
                    reduce_partner.push(row * npcols + j);
                    div /= 2;
                }
                let reduce_send = (1..=l2npcols)
                    .map(|i| if !square && i == l2npcols { rows - send_len } else { send_len })
                    .collect();
                let reduce_recv = (1..=l2npcols)
                    .map(|_| if square { rows } else { send_len })
                    .collect();
                let transpose_partner = if square {
                    (me % nprows) * nprows + me / nprows
                } else {
                    2 * ((me / 2) % nprows * nprows + me / 2 / nprows) + me % 2
                };
                Proc {
                    reduce_partner,
                    reduce_send,
                    reduce_recv,
                    transpose_partner,
                    transpose_send: send_len,
                    transpose_recv: cols,
                }
            })
            .collect();
        Ok(Self {
            procs,
            nprows,
            npcols,
            na,
            outer_iterations,
            nonzer: nonzer(class).expect("the class was checked"),
            procs_info,
        })
    }

    /// CG iterations in the timed run: `outer_iterations` × (25 + the
    /// residual's product, which has the same communication bar one
    /// scalar reduction).
    pub fn timed_iterations(&self) -> u64 {
        self.outer_iterations as u64 * (CG_ITERATIONS as u64 + 1)
    }

    /// One CG iteration's computation per process on a node with rates
    /// `node`: a roofline of NPB's own operation count (`cg.f` reports
    /// 2·na·(5 + nonzer·(nonzer+1)) operations per iteration: the sparse
    /// product's multiply-add per nonzero and five vector operations per
    /// row) against the bytes it moves — 12 per nonzero of the process's
    /// block (an 8-byte value and a 4-byte column index; the gathered
    /// vector piece stays in cache) and 12 words per element of its vector
    /// piece of na/npcols elements (the product's result written; p·q,
    /// z += αp, r −= αq, r·r and p = r + βp read 11). The sparse product is
    /// memory-bound on any node with fewer than ~6 flops per byte of memory
    /// bandwidth (K: 2).
    pub fn iteration_compute(&self, node: NodeRates) -> CgCompute {
        let na = self.na as f64;
        let per_row = (self.nonzer * (self.nonzer + 1)) as f64;
        let procs = self.procs as f64;
        let flops = 2.0 * na * (5.0 + per_row) / procs;
        let memory_bytes = 12.0 * na * per_row / procs + 12.0 * 8.0 * na / self.npcols as f64;
        let seconds = (flops / node.flops_per_second).max(memory_bytes / node.memory_bytes_per_second);
        CgCompute { flops, memory_bytes, seconds }
    }

    fn l2npcols(&self) -> usize {
        self.npcols.trailing_zeros() as usize
    }

    /// The bytes each process sends each other one over the timed run
    /// (`outer_iterations` × (25 CG iterations + the residual)).
    pub fn comm_list(&self) -> CommList {
        let mut flows = Vec::new();
        let per_outer_products = (CG_ITERATIONS + 1) as u64;
        // Scalars per outer iteration, in doubles over every reduce step:
        // 2 per CG iteration, ρ, the residual norm (1 each) and the main
        // loop's two-double norm.
        let scalar_doubles = 2 * CG_ITERATIONS as u64 + 1 + 1 + 2;
        let outer = self.outer_iterations as u64;
        for (me, p) in self.procs_info.iter().enumerate() {
            let me = me as u32;
            for (i, &peer) in p.reduce_partner.iter().enumerate() {
                let doubles = per_outer_products * p.reduce_send[i] + scalar_doubles;
                flows.push(Flow { src: me, dst: peer, bytes: 8 * doubles * outer });
            }
            if self.l2npcols() > 0 {
                flows.push(Flow {
                    src: me,
                    dst: p.transpose_partner,
                    bytes: 8 * per_outer_products * p.transpose_send * outer,
                });
            }
        }
        CommList::new(self.procs, flows)
    }

    /// One CG iteration's communication as a schedule: the reduction
    /// exchanges one after another (each waits for its receive, as
    /// `mpi_wait` does, and sums it), the transpose exchange, then the two
    /// scalar reductions. Computation is not included.
    pub fn iteration_schedule(&self) -> Schedule {
        let max_len = self
            .procs_info
            .iter()
            .flat_map(|p| {
                p.reduce_send
                    .iter()
                    .chain(&p.reduce_recv)
                    .copied()
                    .chain([p.transpose_send, p.transpose_recv])
            })
            .max()
            .unwrap_or(1)
            .max(1);
        let mut s = Schedule::new(tofusim_comm::Collective::Transfers, "cg-iteration", self.procs, max_len);
        let mut last: Vec<Vec<StepId>> = vec![Vec::new(); self.procs as usize];
        let l2 = self.l2npcols();
        // Steps are added round by round for all ranks, so that each
        // rank's program order matches its MPI call order.
        for i in (0..l2).rev() {
            for me in 0..self.procs {
                let p = &self.procs_info[me as usize];
                let peer = p.reduce_partner[i];
                let deps = last[me as usize].clone();
                s.send(me, peer, vec![Span::new(0, p.reduce_send[i])], 0, &deps);
                let r = s.recv(me, peer, vec![Span::new(0, p.reduce_recv[i])], Combine::Sum, &deps);
                last[me as usize] = vec![r];
            }
        }
        if l2 > 0 {
            for me in 0..self.procs {
                let p = &self.procs_info[me as usize];
                let deps = last[me as usize].clone();
                if p.transpose_partner != me {
                    s.send(me, p.transpose_partner, vec![Span::new(0, p.transpose_send)], 0, &deps);
                    let r = s.recv(me, p.transpose_partner, vec![Span::new(0, p.transpose_recv)], Combine::Replace, &deps);
                    last[me as usize] = vec![r];
                }
            }
        }
        for _ in 0..2 {
            for i in 0..l2 {
                for me in 0..self.procs {
                    let peer = self.procs_info[me as usize].reduce_partner[i];
                    let deps = last[me as usize].clone();
                    s.send(me, peer, vec![Span::new(0, 1)], 0, &deps);
                    let r = s.recv(me, peer, vec![Span::new(0, 1)], Combine::Sum, &deps);
                    last[me as usize] = vec![r];
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_and_partners_follow_npb() {
        let l = CgLayout::new(1024, 'B').unwrap();
        assert_eq!((l.nprows, l.npcols), (32, 32));
        let l = CgLayout::new(8192, 'D').unwrap();
        assert_eq!((l.nprows, l.npcols), (64, 128));
        let l = CgLayout::new(16, 'S').unwrap();
        // Rank 5 = row 1, column 1 of a 4×4 grid: partners at column
        // distance 2 then 1; transpose partner is rank 4·1 + 1 = 5 → itself.
        assert_eq!(l.procs_info[5].reduce_partner, vec![7, 4]);
        assert_eq!(l.procs_info[6].transpose_partner, 9);
        // Every exchange is mutual.
        for n in [16u32, 32, 64] {
            let l = CgLayout::new(n, 'A').unwrap();
            for (me, p) in l.procs_info.iter().enumerate() {
                for (i, &q) in p.reduce_partner.iter().enumerate() {
                    assert_eq!(l.procs_info[q as usize].reduce_partner[i], me as u32);
                }
                assert_eq!(l.procs_info[p.transpose_partner as usize].transpose_partner, me as u32);
            }
        }
        assert!(CgLayout::new(24, 'B').is_err());
        assert!(CgLayout::new(16, 'Q').is_err());
    }

    #[test]
    fn volumes_add_up() {
        // Square grid: each of log2(npcols) steps sends the row block.
        let l = CgLayout::new(16, 'B').unwrap();
        let c = l.comm_list();
        let rows = 75_000 / 4;
        let per = 8 * 75 * (26 * rows + 54);
        assert_eq!(c.flows.iter().find(|f| f.src == 0 && f.dst == 2).unwrap().bytes, per);
        // The iteration schedule's messages pair up and it runs.
        let s = l.iteration_schedule();
        assert!(s.validate().is_ok());
        assert_eq!(s.messages(), 16 * 2 + 12 + 16 * 2 * 2);
    }

    #[test]
    fn the_compute_model_counts_npb_operations_and_is_memory_bound_on_k() {
        let l = CgLayout::new(1024, 'B').unwrap();
        let c = l.iteration_compute(K_NODE);
        // NPB's count: 2 * 75,000 * (5 + 13 * 14) per iteration over 1,024 processes.
        assert!((c.flops - 2.0 * 75_000.0 * 187.0 / 1024.0).abs() < 1e-6);
        assert!((c.memory_bytes - (12.0 * 75_000.0 * 182.0 / 1024.0 + 96.0 * 75_000.0 / 32.0)).abs() < 1e-6);
        assert_eq!(c.seconds, c.memory_bytes / 64e9, "memory-bound");
        assert_eq!(l.timed_iterations(), 75 * 26);
        // Twice the processes, about half the work each.
        let half = CgLayout::new(2048, 'B').unwrap().iteration_compute(K_NODE);
        assert!(half.flops * 2.0 - c.flops < 1e-6 && half.seconds < 0.6 * c.seconds);
        // A node with a tiny peak is bound by its flops instead.
        let slow = l.iteration_compute(NodeRates { flops_per_second: 1e9, memory_bytes_per_second: 64e9 });
        assert_eq!(slow.seconds, c.flops / 1e9);
    }
}
