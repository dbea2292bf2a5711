#!/usr/bin/env node
// NDNts consumer for Trajan's interoperability tests.
//
// Usage: ndnts_consumer.mjs NAME [--can-be-prefix] [--must-be-fresh] [--lifetime MS]
//
// Connects to the forwarder named by NDN_CLIENT_TRANSPORT, expresses one Interest
// and prints "NAME <uri>", "CONTENT <text>", "FRESHNESS <ms|none>" on Data (exit 0).
// Exit codes otherwise: 2 Nack ("NACK <reason>"), 3 timeout ("TIMEOUT"),
// 4 cannot connect, 1 anything else.
import { connectUplink, die, load, parseArgv, say } from "./ndnts_common.mjs";

const { positional, flags } = parseArgv(process.argv.slice(2), ["lifetime"]);
if (positional.length !== 1) {
  die("usage: ndnts_consumer.mjs NAME [--can-be-prefix] [--must-be-fresh] [--lifetime MS]", 64);
}

const { consume } = await load("@ndn/endpoint");
const { Forwarder } = await load("@ndn/fw");
const { Interest, Name } = await load("@ndn/packet");
const { AltUri } = await load("@ndn/naming-convention2");

const fw = Forwarder.create();
let uplink;
try {
  uplink = await connectUplink({ fw }); // default route "/" towards the forwarder
} catch (err) {
  die(`cannot connect to forwarder: ${err}`, 4);
}

const interest = new Interest(AltUri.parseName(positional[0]));
interest.canBePrefix = Boolean(flags["can-be-prefix"]);
interest.mustBeFresh = Boolean(flags["must-be-fresh"]);
interest.lifetime = Number(flags.lifetime ?? 4000);

let code = 1;
try {
  const data = await consume(interest, { fw, describe: "interop-consumer" });
  say(`NAME ${AltUri.ofName(data.name)}`);
  say(`CONTENT ${new TextDecoder().decode(data.content)}`);
  say(`FRESHNESS ${data.freshnessPeriod > 0 ? data.freshnessPeriod : "none"}`);
  code = 0;
} catch (err) {
  const msg = String(err?.message ?? err);
  const m = /Interest rejected: (\w+)/.exec(msg);
  if (m && m[1] === "expire") {
    say("TIMEOUT");
    code = 3;
  } else if (m) {
    say(`NACK ${m[1]}`);
    code = 2;
  }
  process.stderr.write(`ERROR ${msg}\n`);
} finally {
  uplink.close();
}
process.exit(code);
