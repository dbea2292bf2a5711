//! What the engine's pipeline tests share: their faces' ids, and a forwarder
//! that knows them with a route for `/a`. Each test binary uses a part of it.
#![allow(dead_code)]

use trajan_engine::{EngineConfig, FaceMeta, Forwarder};
use trajan_wire::Name;

pub const CONSUMER: u32 = 300;
pub const CONSUMER2: u32 = 301;
pub const CONSUMER3: u32 = 302;
pub const PRODUCER: u32 = 400;
pub const PRODUCER2: u32 = 401;

/// The name `s`, which a test writes correctly.
pub fn name(s: &str) -> Name {
    s.parse().unwrap()
}

/// A forwarder with a 100-packet content store, `faces` as point-to-point
/// network faces, and a route for `/a` through [`PRODUCER`] at cost 10.
pub fn forwarder_with(faces: &[u32]) -> Forwarder {
    let mut f = Forwarder::new(&EngineConfig { cs_capacity: 100, ..Default::default() }, 0);
    for &id in faces {
        f.add_face(id, FaceMeta { local: false, point_to_point: true, ..Default::default() });
    }
    f.fib.add_nexthop(&name("/a"), PRODUCER, 10);
    f
}
