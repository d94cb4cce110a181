//! `npu-smi` stand-in (see `pd_rehearse::standin::npu_smi`).

fn main() {
    pd_rehearse::standin::npu_smi::main(std::env::args().skip(1).collect());
}
