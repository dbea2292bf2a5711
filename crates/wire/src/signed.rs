//! Interests with ApplicationParameters, Interests signed with DigestSha256
//! (NDN packet format v0.3 §5.4), and DigestSha256 verification of Interests and Data.
//!
//! DigestSha256 proves integrity, not origin: it is what NFD management accepts from
//! local applications and what Trajan's producers sign with, so the tools can check
//! every segment they fetch without keys. Other signature types are reported, not
//! verified.

use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::data::Data;
use crate::error::WireError;
use crate::interest::Interest;
use crate::name::Name;
use crate::tlv::{decode_outer, read_header, read_nonneg, write_nonneg, write_tlv, TlvReader};
use crate::types::*;

/// InterestSignatureInfo field: random bytes against replay.
pub const SIGNATURE_NONCE: u32 = 0x26;
/// InterestSignatureInfo field: signing time, ms since the Unix epoch.
pub const SIGNATURE_TIME: u32 = 0x28;
/// InterestSignatureInfo field: a per-signer counter.
pub const SIGNATURE_SEQ_NUM: u32 = 0x2a;

/// The anti-replay fields of an InterestSignatureInfo. A forwarder that checks
/// command freshness (NFD) wants at least a nonce or a time; all are optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignatureFields {
    /// SignatureNonce bytes (python-ndn and ndn-cxx use 8 random bytes).
    pub nonce: Option<Vec<u8>>,
    /// SignatureTime, milliseconds since the Unix epoch.
    pub time_ms: Option<u64>,
    /// SignatureSeqNum.
    pub seq_num: Option<u64>,
}

/// The outcome of checking a packet's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureCheck {
    /// DigestSha256 over the covered part matches.
    Valid,
    /// A DigestSha256 signature or a ParametersSha256DigestComponent does not match.
    Invalid,
    /// An Interest with no InterestSignatureInfo.
    Unsigned,
    /// A signature of this SignatureType, which needs a key to verify.
    OtherType(u64),
}

/// The name without its ParametersSha256DigestComponent(s): what the signature covers
/// and where the new digest is appended.
fn strip_params_digest(name: &Name) -> Name {
    Name::from_components(name.components().filter(|c| c.typ != PARAMETERS_SHA256_DIGEST).map(|c| (c.typ, c.value)))
}

/// Installs `tail` (ApplicationParameters onwards) and the matching digest component.
fn finish(interest: &mut Interest, base: Name, tail: Vec<u8>) {
    let digest = Sha256::digest(&tail);
    interest.name = base.append(PARAMETERS_SHA256_DIGEST, &digest);
    interest.params_tail = Some(Bytes::from(tail));
}

/// Gives `interest` ApplicationParameters and the ParametersSha256DigestComponent
/// that binds them to its name, replacing any earlier parameters or signature.
/// Only the tests build unsigned Interests with parameters, to check that
/// [`verify_interest`] finds them unsigned and that their encoding matches NDN's.
#[cfg(test)]
pub fn set_parameters(interest: &mut Interest, params: &[u8]) {
    let base = strip_params_digest(&interest.name);
    let mut tail = Vec::with_capacity(params.len() + 4);
    write_tlv(&mut tail, APPLICATION_PARAMETERS, params);
    finish(interest, base, tail);
}

/// Gives `interest` ApplicationParameters and signs it with DigestSha256: the
/// signature covers the name components (minus the parameters digest),
/// ApplicationParameters and InterestSignatureInfo; the parameters digest then
/// covers ApplicationParameters through InterestSignatureValue.
pub fn sign_digest_sha256(interest: &mut Interest, params: &[u8], fields: &SignatureFields) {
    let base = strip_params_digest(&interest.name);
    let mut info = Vec::with_capacity(32);
    write_nonneg(&mut info, SIGNATURE_TYPE, SIGNATURE_DIGEST_SHA256);
    if let Some(n) = &fields.nonce {
        write_tlv(&mut info, SIGNATURE_NONCE, n);
    }
    if let Some(t) = fields.time_ms {
        write_nonneg(&mut info, SIGNATURE_TIME, t);
    }
    if let Some(s) = fields.seq_num {
        write_nonneg(&mut info, SIGNATURE_SEQ_NUM, s);
    }
    let mut tail = Vec::with_capacity(params.len() + info.len() + 44);
    write_tlv(&mut tail, APPLICATION_PARAMETERS, params);
    write_tlv(&mut tail, INTEREST_SIGNATURE_INFO, &info);
    let mut h = Sha256::new();
    h.update(base.value());
    h.update(&tail);
    write_tlv(&mut tail, INTEREST_SIGNATURE_VALUE, &h.finalize());
    finish(interest, base, tail);
}

/// Reads a SignatureInfo/InterestSignatureInfo value's SignatureType.
fn signature_type(info: Bytes) -> Result<u64, WireError> {
    read_nonneg(&TlvReader::new(info).expect(SIGNATURE_TYPE)?.value)
}

/// DigestSha256 check of `covered` (given in pieces) against `value`.
fn check_digest(covered: &[&[u8]], value: &[u8]) -> SignatureCheck {
    let mut h = Sha256::new();
    covered.iter().for_each(|c| h.update(c));
    if h.finalize()[..] == *value {
        SignatureCheck::Valid
    } else {
        SignatureCheck::Invalid
    }
}

/// Checks an Interest's ParametersSha256DigestComponent and, if it is signed, its
/// DigestSha256 signature. An Interest without parameters is `Unsigned`; one whose
/// name lacks the digest component, or has it without parameters, is `Invalid`.
pub fn verify_interest(interest: &Interest) -> Result<SignatureCheck, WireError> {
    let digests: Vec<&[u8]> =
        interest.name.components().filter(|c| c.typ == PARAMETERS_SHA256_DIGEST).map(|c| c.value).collect();
    let Some(tail) = &interest.params_tail else {
        return Ok(if digests.is_empty() { SignatureCheck::Unsigned } else { SignatureCheck::Invalid });
    };
    if digests.len() != 1 || *digests[0] != Sha256::digest(tail)[..] {
        return Ok(SignatureCheck::Invalid);
    }
    let mut pos = 0;
    let mut info_end = None;
    let mut sig_type = None;
    while pos < tail.len() {
        let (typ, start, end) = read_header(tail, &mut pos)?;
        match typ {
            INTEREST_SIGNATURE_INFO => {
                sig_type = Some(signature_type(tail.slice(start..end))?);
                info_end = Some(end);
            }
            INTEREST_SIGNATURE_VALUE => {
                let (Some(t), Some(covered_end)) = (sig_type, info_end) else {
                    return Err(WireError::OutOfOrder(INTEREST_SIGNATURE_VALUE));
                };
                if t != SIGNATURE_DIGEST_SHA256 {
                    return Ok(SignatureCheck::OtherType(t));
                }
                let base = strip_params_digest(&interest.name);
                return Ok(check_digest(&[base.value(), &tail[..covered_end]], &tail[start..end]));
            }
            _ => {}
        }
    }
    Ok(match sig_type {
        None => SignatureCheck::Unsigned,
        Some(_) => return Err(WireError::Missing(INTEREST_SIGNATURE_VALUE)),
    })
}

/// Checks a Data packet's DigestSha256 signature (Name through SignatureInfo).
pub fn verify_data(data: &Data) -> Result<SignatureCheck, WireError> {
    if data.signature_type != SIGNATURE_DIGEST_SHA256 {
        return Ok(SignatureCheck::OtherType(data.signature_type));
    }
    let value = decode_outer(data.wire(), DATA)?.value;
    let mut pos = 0;
    let mut covered_end = None;
    while pos < value.len() {
        let (typ, start, end) = read_header(&value, &mut pos)?;
        match typ {
            SIGNATURE_INFO => covered_end = Some(end),
            SIGNATURE_VALUE => {
                let covered_end = covered_end.ok_or(WireError::OutOfOrder(SIGNATURE_VALUE))?;
                return Ok(check_digest(&[&value[..covered_end]], &value[start..end]));
            }
            _ => {}
        }
    }
    Err(WireError::Missing(SIGNATURE_VALUE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataBuilder;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// python-ndn's `make_interest('/localhost/nfd/rib/register',
    /// InterestParam(nonce=0x01020304, lifetime=4000), app_param=b'xyz',
    /// signer=DigestSha256Signer(for_interest=True))`; python-ndn picked the
    /// SignatureNonce and SignatureTime, which the test reuses.
    const PYTHON_NDN_SIGNED: &str = "058d074108096c6f63616c686f737408036e666408037269620808726567697374657202200741c6f731374653cc4887edb151d57b191271eab68c2aa0a15f531ffbc159710a04010203040c020fa0240378797a2c171b010026081097f1a4945446fb2808000001a200c222762e20cb004c2bcc85671725809cbd538fe08d8ced3a003b6adf583cf340e44dc57617";

    /// python-ndn's `make_interest('/a/b', InterestParam(nonce=0x01020304,
    /// lifetime=4000, can_be_prefix=True), app_param=b'')`.
    const PYTHON_NDN_PARAMS: &str = "05380728080161080162022033b67cb5385ceddad93d0ee960679041613bed34b8b4a5e6362fe7539ba2d3ce21000a04010203040c020fa02400";

    #[test]
    fn matches_python_ndn_signed_interest() {
        let mut i = Interest::new("/localhost/nfd/rib/register".parse().unwrap());
        i.nonce = Some(0x01020304);
        i.lifetime_ms = Some(4000);
        let fields = SignatureFields {
            nonce: Some(hex("1097f1a4945446fb")),
            time_ms: Some(0x1a200c22276),
            seq_num: None,
        };
        sign_digest_sha256(&mut i, b"xyz", &fields);
        assert_eq!(i.encode()[..], hex(PYTHON_NDN_SIGNED)[..]);
        let decoded = Interest::decode(&Bytes::from(hex(PYTHON_NDN_SIGNED))).unwrap();
        assert_eq!(verify_interest(&decoded), Ok(SignatureCheck::Valid));
    }

    #[test]
    fn matches_python_ndn_parameters() {
        let mut i = Interest::new("/a/b".parse().unwrap());
        i.can_be_prefix = true;
        i.nonce = Some(0x01020304);
        i.lifetime_ms = Some(4000);
        set_parameters(&mut i, b"");
        assert_eq!(i.encode()[..], hex(PYTHON_NDN_PARAMS)[..]);
        assert_eq!(verify_interest(&i), Ok(SignatureCheck::Unsigned));
    }

    #[test]
    fn detects_tampering() {
        let mut i = Interest::new("/x".parse().unwrap());
        sign_digest_sha256(&mut i, b"p", &SignatureFields { seq_num: Some(3), ..Default::default() });
        assert_eq!(verify_interest(&i), Ok(SignatureCheck::Valid));
        // Re-signing replaces the old digest component rather than adding one.
        sign_digest_sha256(&mut i, b"q", &SignatureFields::default());
        assert_eq!(i.name.len(), 2);
        assert_eq!(verify_interest(&i), Ok(SignatureCheck::Valid));
        // Changing the name breaks the signature but not the parameters digest.
        let mut renamed = i.clone();
        renamed.name = Name::from_components([(GENERIC_COMPONENT, &b"y"[..]), (PARAMETERS_SHA256_DIGEST, i.name.get(1).value)]);
        assert_eq!(verify_interest(&renamed), Ok(SignatureCheck::Invalid));
        // Changing a parameter byte breaks the digest.
        let mut tail = i.params_tail.clone().unwrap().to_vec();
        tail[2] ^= 1;
        let mut bad = i.clone();
        bad.params_tail = Some(Bytes::from(tail));
        assert_eq!(verify_interest(&bad), Ok(SignatureCheck::Invalid));
        // A digest component without parameters.
        let mut stray = i.clone();
        stray.params_tail = None;
        assert_eq!(verify_interest(&stray), Ok(SignatureCheck::Invalid));
        assert_eq!(verify_interest(&Interest::new("/x".parse().unwrap())), Ok(SignatureCheck::Unsigned));
    }

    #[test]
    fn verifies_data_digest() {
        let w = DataBuilder::new("/d/seg=0".parse().unwrap()).final_segment(0).build(b"content");
        let d = Data::decode(&w).unwrap();
        assert_eq!(verify_data(&d), Ok(SignatureCheck::Valid));
        let mut v = w.to_vec();
        let at = v.windows(7).position(|x| x == b"content").unwrap();
        v[at] = b'C';
        let tampered = Data::decode(&Bytes::from(v)).unwrap();
        assert_eq!(verify_data(&tampered), Ok(SignatureCheck::Invalid));
        let mut other = d;
        other.signature_type = 3;
        assert_eq!(verify_data(&other), Ok(SignatureCheck::OtherType(3)));
    }

    proptest! {
        #[test]
        fn signed_interests_verify_after_decoding(
            comps in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..8), 0..4),
            params in proptest::collection::vec(any::<u8>(), 0..64), time: Option<u64>, sign: bool) {
            let mut i = Interest::new(Name::from_components(comps.iter().map(|c| (GENERIC_COMPONENT, c.as_slice()))));
            if sign {
                sign_digest_sha256(&mut i, &params, &SignatureFields { time_ms: time, ..Default::default() });
            } else {
                set_parameters(&mut i, &params);
            }
            let d = Interest::decode(&i.encode()).unwrap();
            prop_assert_eq!(d.app_parameters().unwrap(), Bytes::from(params));
            let expected = if sign { SignatureCheck::Valid } else { SignatureCheck::Unsigned };
            prop_assert_eq!(verify_interest(&d), Ok(expected));
        }

        #[test]
        fn verify_never_panics(data in proptest::collection::vec(any::<u8>(), 0..100)) {
            let mut v = vec![5u8, (data.len() + 2) as u8, 7, 0];
            v.extend_from_slice(&data);
            if let Ok(i) = Interest::decode(&Bytes::from(v)) {
                let _ = verify_interest(&i);
            }
            let mut v = vec![6u8, (data.len() + 7) as u8, 7, 0, 0x16, 3, 0x1b, 1, 0];
            v.extend_from_slice(&data);
            if let Ok(d) = Data::decode(&Bytes::from(v)) {
                let _ = verify_data(&d);
            }
        }
    }
}
