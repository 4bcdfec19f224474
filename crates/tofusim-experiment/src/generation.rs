//! The hardware generation of a system: which router model, NIC and
//! communication model it gets. An explicit key of every preset
//! (`generation = "tofu1"`) and optional in a user's `[network]` table,
//! where the topology gives the default — never guessed from link rates
//! or preset names.

use serde::Serialize;
use tofusim_topology::Topology;

/// A hardware generation (the enum is the registry: [`Generation::ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generation {
    /// Blue Gene/L torus router ([S:004]); also the model of generic
    /// tori and meshes, of Blue Gene/Q's 5D torus (its own router is not
    /// modelled), and, when asked for, of a Tofu 6D torus (the same router
    /// on every torus when topologies are compared).
    Bgl,
    /// Tofu1: K computer, FX10.
    Tofu1,
    /// Tofu2: FX100.
    Tofu2,
    /// Tofu Interconnect D: Fugaku.
    Tofud,
    /// Cray Aries (XC) dragonfly.
    Aries,
    /// A dragonfly of no particular hardware: the BG/L router's buffers and
    /// host costs, an assumed 100 ns hop, the hop-class VC policy and the
    /// link classes' rates.
    GenericDragonfly,
    /// A fat-tree switch (InfiniBand, Omni-Path, Sunway's network).
    FatTree,
}

/// A generation's hardware asked for on a topology it is not built as.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("generation {generation:?} needs {needs}")]
pub struct WrongTopology {
    pub generation: &'static str,
    pub needs: &'static str,
}

impl Generation {
    pub const ALL: [Generation; 7] = [
        Self::Bgl,
        Self::Tofu1,
        Self::Tofu2,
        Self::Tofud,
        Self::Aries,
        Self::GenericDragonfly,
        Self::FatTree,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Bgl => "bgl",
            Self::Tofu1 => "tofu1",
            Self::Tofu2 => "tofu2",
            Self::Tofud => "tofud",
            Self::Aries => "aries",
            Self::GenericDragonfly => "generic-dragonfly",
            Self::FatTree => "fattree",
        }
    }

    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|g| g.name()).collect()
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.name() == s)
    }

    /// The generation of a topology written out without one.
    pub fn default_for(topology: &Topology) -> Self {
        match topology {
            Topology::Torus(_) => Self::Bgl,
            Topology::Tofu(_) => Self::Tofu1,
            Topology::Dragonfly(d) if d.is_aries() => Self::Aries,
            Topology::Dragonfly(_) => Self::GenericDragonfly,
            Topology::FatTree(_) => Self::FatTree,
        }
    }

    /// The generation's barrier interface (Tofu2's gates are Tofu1's,
    /// [S:000]); the other networks have none.
    pub fn barrier_hardware(self) -> Option<tofusim_comm::barrier_hw::BarrierHardware> {
        use tofusim_comm::barrier_hw::BarrierHardware;
        match self {
            Self::Tofud => Some(BarrierHardware::tofud()),
            Self::Tofu1 | Self::Tofu2 => Some(BarrierHardware::tofu1()),
            Self::Bgl | Self::Aries | Self::GenericDragonfly | Self::FatTree => None,
        }
    }

    /// The MPI software the generation's machines run
    /// ([`tofusim_comm::mpi::MpiConfig`]'s profiles, each value with its
    /// source): Fujitsu MPI on the Tofu generations, Cray MPICH on Aries,
    /// BG/L's MPI on the BG/L router's tori; a generic MPI on fat-trees and
    /// generic dragonflies, which name no machine.
    pub fn mpi_software(self) -> tofusim_comm::mpi::MpiConfig {
        use tofusim_comm::mpi::MpiConfig;
        match self {
            Self::Tofu1 => MpiConfig::k_computer(),
            Self::Tofu2 => MpiConfig::fx100(),
            Self::Tofud => MpiConfig::fugaku(),
            Self::Bgl => MpiConfig::blue_gene_l(),
            Self::Aries => MpiConfig::cray_mpich(),
            Self::GenericDragonfly | Self::FatTree => MpiConfig::generic(),
        }
    }

    /// The MPI library whose collective rules the generation's machines run
    /// by default: Fujitsu MPI on Tofu, MPICH on Aries (Cray MPICH) and on
    /// the BG/L router's tori (BG/L's MPI is MPICH2 based), Open MPI on
    /// fat-trees and generic dragonflies.
    pub fn mpi_library(self) -> tofusim_comm::library::Library {
        use tofusim_comm::library::Library;
        match self {
            Self::Tofu1 | Self::Tofu2 | Self::Tofud => Library::Fjmpi,
            Self::Aries | Self::Bgl => Library::Mpich,
            Self::GenericDragonfly | Self::FatTree => Library::Openmpi,
        }
    }

    /// The barrier interface's logic delays, for the `barrier-interface`
    /// algorithm.
    pub fn gate_timing(self) -> Option<tofusim_comm::algorithms::barrier_interface::GateTiming> {
        self.barrier_hardware().map(|h| tofusim_comm::algorithms::barrier_interface::GateTiming { bch_ns: h.bch_ns.round() as u32, bg_ns: h.bg_ns.round() as u32 })
    }

    /// Whether the generation's hardware can be built as `topology`; `Err`
    /// says which topology it needs.
    pub fn check(self, topology: &Topology) -> Result<(), WrongTopology> {
        let ok = match self {
            // The BG/L router runs any torus, the Tofu 6D one included (a
            // like-for-like router when topologies are compared).
            Self::Bgl => matches!(topology, Topology::Torus(_) | Topology::Tofu(_)),
            Self::Tofu1 | Self::Tofu2 | Self::Tofud => matches!(topology, Topology::Tofu(_)),
            Self::Aries => matches!(topology, Topology::Dragonfly(d) if d.is_aries()),
            Self::GenericDragonfly => matches!(topology, Topology::Dragonfly(_)),
            Self::FatTree => matches!(topology, Topology::FatTree(_)),
        };
        let needs = match self {
            Self::Bgl => "topology = \"torus\", \"mesh\" or \"tofu\"",
            Self::Tofu1 | Self::Tofu2 | Self::Tofud => "topology = \"tofu\"",
            Self::Aries => "topology = \"dragonfly\" with form = \"aries\"",
            Self::GenericDragonfly => "topology = \"dragonfly\"",
            Self::FatTree => "topology = \"fattree\"",
        };
        if ok {
            Ok(())
        } else {
            Err(WrongTopology { generation: self.name(), needs })
        }
    }
}

/// The MPI library called `name`, or the refusal listing them (key `library`).
pub fn parse_library(name: &str) -> crate::error::Result<tofusim_comm::library::Library> {
    use tofusim_comm::library::Library;
    Library::parse(name).ok_or_else(|| {
        let all: Vec<&str> = Library::ALL.iter().map(|l| l.name()).collect();
        crate::error::ConfigError::new("<command line>", "library", format!("unknown MPI library `{name}`; expected one of: {}", all.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for g in Generation::ALL {
            assert_eq!(Generation::parse(g.name()), Some(g));
        }
        assert_eq!(Generation::parse("tofu3"), None);
    }

    #[test]
    fn every_generation_has_its_mpi_software() {
        use tofusim_comm::mpi::BufferMode;
        let names: Vec<_> = Generation::ALL.iter().map(|g| g.mpi_software().profile).collect();
        assert_eq!(names, ["bgl-mpi", "fujitsu-mpi-k", "fujitsu-mpi-fx100", "fujitsu-mpi-fugaku", "cray-mpich", "generic-mpi", "generic-mpi"]);
        for g in Generation::ALL {
            let m = g.mpi_software();
            assert!(!m.sources.is_empty(), "{} names no sources", m.profile);
            // The Tofu generations' host costs are the put's, so the MPI
            // software comes on top; the others' already hold it.
            let on_top = matches!(g, Generation::Tofu1 | Generation::Tofu2 | Generation::Tofud);
            assert_eq!(m.software_ns(8, BufferMode::HighSpeed) > 0, on_top, "{}", m.profile);
        }
        assert_eq!(Generation::Aries.mpi_software().eager_limit_bytes, 8192);
    }
}
