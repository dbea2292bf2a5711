#!/usr/bin/env node
// NDNts producer for Trajan's interoperability tests.
//
// Usage: ndnts_producer.mjs PREFIX [--content TEXT] [--freshness MS] [--prefix-ann]
//
// Connects to the forwarder named by NDN_CLIENT_TRANSPORT, registers PREFIX with
// rib/register (enableNfdPrefixReg, NDNts 0.0.20250307) and answers every
// Interest under PREFIX with a Data named as the Interest, content TEXT or
// "NDNts:<interest name>". Prints READY once the forwarder accepted the
// registration, one "INTEREST <name>" line per Interest, exits 0 on SIGTERM.
import { connectUplink, die, load, parseArgv, say } from "./ndnts_common.mjs";

const { positional, flags } = parseArgv(process.argv.slice(2), ["content", "freshness", "ready-timeout"]);
if (positional.length !== 1) {
  die("usage: ndnts_producer.mjs PREFIX [--content TEXT] [--freshness MS]", 64);
}

const { produce } = await load("@ndn/endpoint");
const { enableNfdPrefixReg } = await load("@ndn/nfdmgmt");
const { Forwarder, ReadvertiseDestination } = await load("@ndn/fw");
const { Data, Name, digestSigning } = await load("@ndn/packet");
const { toUtf8 } = await load("@ndn/util");
const { AltUri } = await load("@ndn/naming-convention2");

const prefix = new Name(positional[0]);
const freshness = flags.freshness === undefined ? undefined : Number(flags.freshness);
const readyTimeout = Number(flags["ready-timeout"] ?? 10000);

const fw = Forwarder.create();
let uplink;
try {
  // addRoutes: [] so that the uplink is not a default route of the local forwarder;
  // Interests only come from the uplink into the producer.
  uplink = await connectUplink({ fw, addRoutes: [] });
} catch (err) {
  die(`cannot connect to forwarder: ${err}`, 4);
}
const reg = enableNfdPrefixReg(uplink, { retry: { retries: 0 } });

const producer = produce(prefix, async (interest) => {
  say(`INTEREST ${AltUri.ofName(interest.name)}`);
  const content = flags.content ?? `NDNts:${AltUri.ofName(interest.name)}`;
  const data = new Data(interest.name, toUtf8(content));
  if (freshness !== undefined) {
    data.freshnessPeriod = freshness;
  }
  await digestSigning.sign(data);
  return data;
}, { fw, describe: "interop-producer" });

const shutdown = () => {
  producer.close();
  uplink.close();
  // Let the close propagate, then leave even if something keeps the loop alive.
  setTimeout(() => process.exit(0), 200).unref();
};
process.once("SIGTERM", shutdown);
process.once("SIGINT", shutdown);

// enableNfdPrefixReg has no completion callback: poll its table until the
// rib/register command got a 200 response (status ADVERTISED), bounded in time.
const t0 = Date.now();
for (;;) {
  const rec = reg.table.get(prefix);
  if (rec?.status === ReadvertiseDestination.Status.ADVERTISED) {
    break;
  }
  if (Date.now() - t0 > readyTimeout) {
    die(`rib/register ${prefix} not acknowledged within ${readyTimeout} ms`, 1);
  }
  await new Promise((r) => setTimeout(r, 20));
}
say("READY");
