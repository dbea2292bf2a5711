//! The generator's producer side: answers every Interest under its prefix with a
//! Data of the chosen size, echoing the Interest's PIT token.

use bytes::Bytes;
use trajan_wire::data::DataBuilder;
use trajan_wire::lp::LpHeaders;
use trajan_wire::{Interest, LpPacket, Name};

use super::ports::GenPort;

/// What the producer did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerStats {
    /// Interests received, under the prefix or not.
    pub interests: u64,
    /// Data sent in reply.
    pub data: u64,
    /// Packets that were not Interests under the prefix.
    pub ignored: u64,
}

/// The producer.
pub struct Producer {
    prefix: Name,
    content: Vec<u8>,
    rx: Vec<Bytes>,
    /// Counts so far, for the report.
    pub stats: ProducerStats,
}

impl Producer {
    /// Answers Interests under `prefix` with `size` bytes of content.
    pub fn new(prefix: Name, size: usize) -> Self {
        Producer { prefix, content: vec![b'x'; size], rx: Vec::with_capacity(64), stats: ProducerStats::default() }
    }

    /// The reply to one received packet, if it is an Interest to answer.
    fn answer(&mut self, pkt: &Bytes) -> Option<Bytes> {
        let lp = LpPacket::decode(pkt).ok()?;
        if lp.headers.nack.is_some() {
            return None;
        }
        let interest = Interest::decode(&lp.fragment?).ok()?;
        self.stats.interests += 1;
        if !self.prefix.is_prefix_of(&interest.name) {
            return None;
        }
        let data = DataBuilder::new(interest.name).build(&self.content);
        Some(match lp.headers.pit_token {
            Some(t) => LpPacket::wrap(&data, &LpHeaders { pit_token: Some(t), ..Default::default() }),
            None => data,
        })
    }

    /// Answers what has arrived (one burst).
    pub fn step(&mut self, port: &mut dyn GenPort) {
        port.recv(&mut self.rx);
        if self.rx.is_empty() {
            return;
        }
        for pkt in std::mem::take(&mut self.rx) {
            match self.answer(&pkt) {
                Some(reply) => {
                    port.send(&reply);
                    self.stats.data += 1;
                }
                None => self.stats.ignored += 1,
            }
        }
        port.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_interests_under_its_prefix_with_the_token() {
        let mut p = Producer::new("/gen".parse().unwrap(), 100);
        let i = Interest::new("/gen/p0/1".parse().unwrap()).encode();
        let d = trajan_wire::Data::decode(&p.answer(&i).unwrap()).unwrap();
        assert_eq!((d.name().to_string().as_str(), d.content().len()), ("/gen/p0/1", 100));
        let token = Bytes::from_static(b"tok");
        let wrapped = LpPacket::wrap(&i, &LpHeaders { pit_token: Some(token.clone()), ..Default::default() });
        let reply = LpPacket::decode(&p.answer(&wrapped).unwrap()).unwrap();
        assert_eq!(reply.headers.pit_token, Some(token));
        assert!(p.answer(&Interest::new("/other".parse().unwrap()).encode()).is_none());
        assert!(p.answer(&Bytes::from_static(b"\x05\x01")).is_none());
    }
}
