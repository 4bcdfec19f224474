//! Links OTF2 (Debian's `libopen-trace-format2-dev`, installed by
//! `make install`).
fn main() {
    println!("cargo:rustc-link-lib=open-trace-format2");
}
