//! `npu-smi` stand-in: `npu-smi info -l` (device list in the real tool's
//! format) and `npu-smi info` (a minimal table); `PD_STANDIN_NPUS` devices
//! (default 16).

use std::process::exit;

fn npus() -> u32 {
    std::env::var("PD_STANDIN_NPUS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(16)
}

/// The stand-in's `main`: `args` excludes the program name.
pub fn main(args: Vec<String>) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let n = npus();
    match args.as_slice() {
        ["info", "-l"] => {
            println!("\tTotal Count                    : {n}");
            for i in 0..n {
                println!();
                println!("\tNPU ID                         : {i}");
                println!("\tProduct Name                   : Ascend (stand-in)");
                println!("\tSerial Number                  : STANDIN{i:06}");
                println!("\tChip Count                     : 1");
            }
        }
        ["info"] => {
            println!(
                "+------------------------------------------------------------------------------------------------+"
            );
            println!(
                "| npu-smi 25.0.rc1 (stand-in)         Version: 25.0.rc1                                          |"
            );
            println!(
                "+---------------------------+---------------+----------------------------------------------------+"
            );
            println!(
                "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|"
            );
            println!(
                "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |"
            );
            println!(
                "+===========================+===============+====================================================+"
            );
            for i in 0..n {
                println!(
                    "| {i:<5} Ascend              | OK            | 90.0        40                0    / 0             |"
                );
                println!(
                    "| 0                         | 0000:{i:02X}:00.0  | 0           0    / 0          3000 / 65536         |"
                );
                println!(
                    "+===========================+===============+====================================================+"
                );
            }
        }
        _ => {
            eprintln!("npu-smi stand-in: unsupported command: {}", args.join(" "));
            exit(1);
        }
    }
}
