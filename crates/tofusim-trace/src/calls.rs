//! Which MPI calls a trace may hold: those the replay models, those that
//! only compute locally, and the rest, which it refuses by name (exit 2
//! with the call and the rank: never a silent skip). docs/traces.md lists
//! them.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    P2p,
    Completion,
    Collective,
    Communicator,
    Lifetime,
    Local,
    Refused,
}

const POINT_TO_POINT: &[&str] = &[
    "MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Recv", "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend", "MPI_Irecv",
    "MPI_Sendrecv", "MPI_Sendrecv_replace",
    // Its effect is the cancelled completion a later wait or test records.
    "MPI_Cancel",
    // Probes move no message: the receive after one does (a probe's own
    // time is not replayed; the receive waits for the message).
    "MPI_Probe", "MPI_Iprobe",
];
const COMPLETION: &[&str] = &["MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"];
const COLLECTIVE: &[&str] = &[
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather",
    "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan",
];
/// Communicator construction: collective over the parent.
const COMMUNICATORS: &[&str] = &[
    "MPI_Comm_split", "MPI_Comm_dup", "MPI_Comm_create", "MPI_Comm_split_type", "MPI_Cart_create", "MPI_Cart_sub", "MPI_Comm_free",
    "MPI_Comm_dup_with_info", "MPI_Graph_create", "MPI_Dist_graph_create", "MPI_Dist_graph_create_adjacent",
];
const LIFETIME: &[&str] = &["MPI_Init", "MPI_Init_thread", "MPI_Finalize"];
/// Calls that move no message: their time is the rank's own.
const LOCAL: &[&str] = &[
    "MPI_Comm_rank", "MPI_Comm_size", "MPI_Wtime", "MPI_Wtick", "MPI_Get_count", "MPI_Get_elements", "MPI_Get_processor_name",
    "MPI_Get_version", "MPI_Get_library_version", "MPI_Initialized", "MPI_Finalized", "MPI_Query_thread", "MPI_Is_thread_main",
    "MPI_Error_string", "MPI_Error_class", "MPI_Abort", "MPI_Comm_group", "MPI_Comm_compare", "MPI_Comm_test_inter", "MPI_Comm_set_name",
    "MPI_Comm_get_name", "MPI_Comm_set_errhandler", "MPI_Comm_get_errhandler", "MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Attr_get",
    "MPI_Group_incl", "MPI_Group_excl", "MPI_Group_free", "MPI_Group_rank", "MPI_Group_size", "MPI_Group_translate_ranks",
    "MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference", "MPI_Group_range_incl", "MPI_Cart_coords", "MPI_Cart_rank",
    "MPI_Cart_shift", "MPI_Cart_get", "MPI_Cartdim_get", "MPI_Dims_create", "MPI_Topo_test", "MPI_Op_create", "MPI_Op_free",
    "MPI_Type_size", "MPI_Type_commit", "MPI_Type_free", "MPI_Type_contiguous", "MPI_Type_vector", "MPI_Type_hvector",
    "MPI_Type_indexed", "MPI_Type_create_struct", "MPI_Type_create_hvector", "MPI_Type_create_resized", "MPI_Type_get_extent",
    "MPI_Type_extent", "MPI_Type_struct", "MPI_Type_create_subarray", "MPI_Type_dup", "MPI_Pack", "MPI_Unpack", "MPI_Pack_size",
    "MPI_Address", "MPI_Get_address", "MPI_Buffer_attach", "MPI_Buffer_detach", "MPI_Info_create", "MPI_Info_set", "MPI_Info_free",
    "MPI_Info_get", "MPI_Errhandler_set", "MPI_Keyval_create", "MPI_Comm_create_keyval", "MPI_Comm_free_keyval", "MPI_Comm_delete_attr",
    "MPI_Pcontrol", "MPI_Status_set_elements", "MPI_Request_get_status", "MPI_Alloc_mem", "MPI_Free_mem", "MPI_Type_get_true_extent",
    "MPI_Type_get_true_extent_x", "MPI_Type_get_extent_x", "MPI_Type_create_hindexed", "MPI_Type_create_indexed_block",
    "MPI_Type_create_hindexed_block", "MPI_Type_get_envelope", "MPI_Type_get_contents", "MPI_Type_size_x", "MPI_Type_set_name",
    "MPI_Type_get_name", "MPI_Comm_remote_size", "MPI_Comm_remote_group", "MPI_Comm_set_info", "MPI_Comm_get_info", "MPI_Info_dup",
    "MPI_Info_get_nkeys", "MPI_Info_get_nthkey", "MPI_Info_delete", "MPI_Group_compare", "MPI_Group_range_excl", "MPI_Get_elements_x",
    "MPI_Errhandler_free", "MPI_Comm_create_errhandler", "MPI_Comm_call_errhandler", "MPI_Add_error_class", "MPI_Add_error_code",
    "MPI_Add_error_string", "MPI_Graph_neighbors", "MPI_Graph_neighbors_count", "MPI_Graphdims_get", "MPI_Graph_get",
    "MPI_Dist_graph_neighbors", "MPI_Dist_graph_neighbors_count", "MPI_Reduce_local", "MPI_Op_commutative", "MPI_Aint_add",
    "MPI_Aint_diff", "MPI_Type_match_size", "MPI_Wtime_overhead",
];

/// Calls that poll: when they complete nothing their time is the host's.
pub const POLLS: &[&str] = &["MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe"];

pub fn kind(name: &str) -> Kind {
    for (k, names) in [
        (Kind::P2p, POINT_TO_POINT),
        (Kind::Completion, COMPLETION),
        (Kind::Collective, COLLECTIVE),
        (Kind::Communicator, COMMUNICATORS),
        (Kind::Lifetime, LIFETIME),
        (Kind::Local, LOCAL),
    ] {
        if names.contains(&name) {
            return k;
        }
    }
    Kind::Refused
}
