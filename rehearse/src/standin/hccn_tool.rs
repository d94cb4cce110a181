//! `hccn_tool` stand-in: `hccn_tool -i N -<query> -g` for `-link`,
//! `-net_health`, `-ip`, `-lldp`, `-gateway`, `-netdetect`, and
//! `-ping -g address IP`. Devices listed in `PD_STANDIN_LINK_DOWN`
//! (comma/space separated) report `DOWN` and a failing net health.

use std::process::exit;

fn down(dev: u32) -> bool {
    std::env::var("PD_STANDIN_LINK_DOWN")
        .unwrap_or_default()
        .split([',', ' '])
        .filter_map(|s| s.trim().parse::<u32>().ok())
        .any(|d| d == dev)
}

fn npus() -> u32 {
    std::env::var("PD_STANDIN_NPUS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(16)
}

fn usage(msg: &str) -> ! {
    eprintln!("hccn_tool stand-in: {msg}");
    exit(1)
}

/// The stand-in's `main`: `args` excludes the program name.
pub fn main(args: Vec<String>) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (dev, query, rest) = match args.as_slice() {
        ["-i", dev, query, rest @ ..] => (*dev, *query, rest),
        _ => usage(&format!("unsupported command: {}", args.join(" "))),
    };
    let Ok(dev) = dev.parse::<u32>() else {
        usage(&format!("bad device id {dev}"))
    };
    if dev >= npus() {
        usage(&format!("device {dev} does not exist"));
    }
    if rest.first() != Some(&"-g") {
        usage(&format!("unsupported command: {}", args.join(" ")));
    }
    let is_down = down(dev);
    match (query, &rest[1..]) {
        ("-link", []) => println!("link status: {}", if is_down { "DOWN" } else { "UP" }),
        ("-net_health", []) => println!(
            "net health status: {}",
            if is_down { "Fault" } else { "Success" }
        ),
        ("-ip", []) => {
            println!("ipaddr:192.168.100.{}", 100 + dev);
            println!("netmask:255.255.255.0");
        }
        ("-lldp", []) => {
            println!("Chassis ID TLV");
            println!("\tMAC: 00:e0:fc:00:00:{dev:02x}");
            println!("Port ID TLV");
            println!("\tIfname: 400GE1/0/{}", dev + 1);
            println!("System Name TLV");
            println!("\tstandin-switch");
        }
        ("-gateway", []) => {
            println!("default gateway:192.168.100.1, Iface:eth{dev}");
        }
        ("-netdetect", []) => println!("netdetect address: 192.168.100.1"),
        ("-ping", ["address", ip, ..]) => {
            if is_down {
                println!("send packets to {ip}: recv 0 packets, lost 3 packets");
                exit(1);
            }
            println!("device {dev} PING {ip}");
            println!("recv seq=0,time=0.050000ms");
            println!("3 packets transmitted, 3 received, 0.00% packet loss");
        }
        _ => usage(&format!("unsupported command: {}", args.join(" "))),
    }
}
