//! The part of OTF2's C reader API the trace reader uses (OTF2 3.0,
//! `/usr/include/otf2`). Only this module is unsafe.
#![allow(unsafe_code, non_camel_case_types, dead_code)]

use std::ffi::{c_char, c_void};

pub type OTF2_ErrorCode = i32;
pub type OTF2_CallbackCode = i32;
pub const OTF2_SUCCESS: OTF2_ErrorCode = 0;
pub const OTF2_CALLBACK_SUCCESS: OTF2_CallbackCode = 0;
pub const OTF2_CALLBACK_INTERRUPT: OTF2_CallbackCode = 1;

pub const OTF2_PARADIGM_MPI: u8 = 4;
pub const OTF2_LOCATION_GROUP_TYPE_PROCESS: u8 = 1;
pub const OTF2_GROUP_TYPE_COMM_LOCATIONS: u8 = 4;
pub const OTF2_GROUP_TYPE_COMM_GROUP: u8 = 5;
pub const OTF2_GROUP_TYPE_COMM_SELF: u8 = 6;
pub const OTF2_UNDEFINED_UINT32: u32 = u32::MAX;

#[repr(C)]
pub struct OTF2_Reader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_GlobalDefReader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_DefReader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_EvtReader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_GlobalDefReaderCallbacks {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_EvtReaderCallbacks {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_AttributeList {
    _p: [u8; 0],
}

pub type Ud = *mut c_void;
pub type Attrs = *mut OTF2_AttributeList;

pub type GlobalString = extern "C" fn(Ud, u32, *const c_char) -> OTF2_CallbackCode;
pub type GlobalClock = extern "C" fn(Ud, u64, u64, u64, u64) -> OTF2_CallbackCode;
pub type GlobalLocationGroup = extern "C" fn(Ud, u32, u32, u8, u32, u32) -> OTF2_CallbackCode;
pub type GlobalLocation = extern "C" fn(Ud, u64, u32, u8, u64, u32) -> OTF2_CallbackCode;
pub type GlobalRegion = extern "C" fn(Ud, u32, u32, u32, u32, u8, u8, u32, u32, u32, u32) -> OTF2_CallbackCode;
pub type GlobalGroup = extern "C" fn(Ud, u32, u32, u8, u8, u32, u32, *const u64) -> OTF2_CallbackCode;
pub type GlobalComm = extern "C" fn(Ud, u32, u32, u32, u32, u32) -> OTF2_CallbackCode;

pub type EvRegion = extern "C" fn(u64, u64, u64, Ud, Attrs, u32) -> OTF2_CallbackCode;
pub type EvMpiP2p = extern "C" fn(u64, u64, u64, Ud, Attrs, u32, u32, u32, u64) -> OTF2_CallbackCode;
pub type EvMpiP2pRequest = extern "C" fn(u64, u64, u64, Ud, Attrs, u32, u32, u32, u64, u64) -> OTF2_CallbackCode;
pub type EvRequest = extern "C" fn(u64, u64, u64, Ud, Attrs, u64) -> OTF2_CallbackCode;
pub type EvCollectiveEnd = extern "C" fn(u64, u64, u64, Ud, Attrs, u8, u32, u32, u64, u64) -> OTF2_CallbackCode;

pub type ErrorCallback = Option<extern "C" fn(Ud, *const c_char, u64, *const c_char, OTF2_ErrorCode, *const c_char, *mut c_void) -> OTF2_ErrorCode>;

#[link(name = "open-trace-format2")]
extern "C" {
    pub fn OTF2_Error_RegisterCallback(cb: ErrorCallback, ud: Ud) -> ErrorCallback;
    pub fn OTF2_Reader_Open(anchor: *const c_char) -> *mut OTF2_Reader;
    pub fn OTF2_Reader_Close(r: *mut OTF2_Reader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_SetSerialCollectiveCallbacks(r: *mut OTF2_Reader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_GetGlobalDefReader(r: *mut OTF2_Reader) -> *mut OTF2_GlobalDefReader;
    pub fn OTF2_Reader_RegisterGlobalDefCallbacks(r: *mut OTF2_Reader, d: *mut OTF2_GlobalDefReader, cb: *const OTF2_GlobalDefReaderCallbacks, ud: Ud) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_ReadAllGlobalDefinitions(r: *mut OTF2_Reader, d: *mut OTF2_GlobalDefReader, n: *mut u64) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_CloseGlobalDefReader(r: *mut OTF2_Reader, d: *mut OTF2_GlobalDefReader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_SelectLocation(r: *mut OTF2_Reader, loc: u64) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_OpenDefFiles(r: *mut OTF2_Reader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_CloseDefFiles(r: *mut OTF2_Reader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_GetDefReader(r: *mut OTF2_Reader, loc: u64) -> *mut OTF2_DefReader;
    pub fn OTF2_Reader_ReadAllLocalDefinitions(r: *mut OTF2_Reader, d: *mut OTF2_DefReader, n: *mut u64) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_CloseDefReader(r: *mut OTF2_Reader, d: *mut OTF2_DefReader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_OpenEvtFiles(r: *mut OTF2_Reader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_CloseEvtFiles(r: *mut OTF2_Reader) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_GetEvtReader(r: *mut OTF2_Reader, loc: u64) -> *mut OTF2_EvtReader;
    pub fn OTF2_Reader_RegisterEvtCallbacks(r: *mut OTF2_Reader, e: *mut OTF2_EvtReader, cb: *const OTF2_EvtReaderCallbacks, ud: Ud) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_ReadAllLocalEvents(r: *mut OTF2_Reader, e: *mut OTF2_EvtReader, n: *mut u64) -> OTF2_ErrorCode;
    pub fn OTF2_Reader_CloseEvtReader(r: *mut OTF2_Reader, e: *mut OTF2_EvtReader) -> OTF2_ErrorCode;

    pub fn OTF2_GlobalDefReaderCallbacks_New() -> *mut OTF2_GlobalDefReaderCallbacks;
    pub fn OTF2_GlobalDefReaderCallbacks_Delete(c: *mut OTF2_GlobalDefReaderCallbacks);
    pub fn OTF2_GlobalDefReaderCallbacks_SetStringCallback(c: *mut OTF2_GlobalDefReaderCallbacks, f: GlobalString) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(c: *mut OTF2_GlobalDefReaderCallbacks, f: GlobalClock) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(c: *mut OTF2_GlobalDefReaderCallbacks, f: GlobalLocationGroup) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetLocationCallback(c: *mut OTF2_GlobalDefReaderCallbacks, f: GlobalLocation) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetRegionCallback(c: *mut OTF2_GlobalDefReaderCallbacks, f: GlobalRegion) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetGroupCallback(c: *mut OTF2_GlobalDefReaderCallbacks, f: GlobalGroup) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetCommCallback(c: *mut OTF2_GlobalDefReaderCallbacks, f: GlobalComm) -> OTF2_ErrorCode;

    pub fn OTF2_EvtReaderCallbacks_New() -> *mut OTF2_EvtReaderCallbacks;
    pub fn OTF2_EvtReaderCallbacks_Delete(c: *mut OTF2_EvtReaderCallbacks);
    pub fn OTF2_EvtReaderCallbacks_SetEnterCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvRegion) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetLeaveCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvRegion) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiSendCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvMpiP2p) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiRecvCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvMpiP2p) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIsendCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvMpiP2pRequest) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvMpiP2pRequest) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvRequest) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvRequest) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvRequest) -> OTF2_ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(c: *mut OTF2_EvtReaderCallbacks, f: EvCollectiveEnd) -> OTF2_ErrorCode;
}
