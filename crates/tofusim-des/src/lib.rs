//! # tofusim-des
//!
//! The event kernel shared by the engines, knowing nothing of networks:
//!
//! - [`TimeWheel`]: integer cycles, a time wheel of power-of-two buckets for
//!   the near future and an overflow heap beyond it. Events are an opaque
//!   `Copy` type; those of one cycle come out in the order they were
//!   scheduled, which keeps runs deterministic.
//! - [`sync`]: the synchronisation of spatial partitions simulated in
//!   conservative time windows (YAWNS): after every window each partition
//!   hands the events it made for the others to them and everybody learns
//!   every partition's report. One interface, [`sync::WindowSync`], with
//!   interchangeable implementations — one partition alone
//!   ([`sync::Serial`]), partitions on threads ([`sync::ThreadGroup`]) and,
//!   through a [`sync::Transport`] such as MPI, partitions in several
//!   processes.

pub mod sync;
mod wheel;

pub use wheel::TimeWheel;
