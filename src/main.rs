//! The `mcp-bridge` executable. Its body is the library's (`app::executable`), so that the
//! library's internals stay private to it.

fn main() {
    mcp_bridge::run_executable()
}
