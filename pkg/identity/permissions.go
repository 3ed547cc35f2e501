package identity

import (
	"time"

	"github.com/nats-io/jwt/v2"

	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// The JetStream API is subjects ($JS.API.<object>.<verb>.<stream>…), so
// permissions on those subjects decide who may do what to a stream. These
// are denied to every role, whatever its allow list says: deleting a
// stream or one of its messages, purging a whole account's JetStream data
// (CVE-2025-30215), restoring a stream over the evidence, moving or
// removing peers, and the system account's subjects.
var deniedToAll = []string{
	"$JS.API.STREAM.DELETE.>",
	"$JS.API.STREAM.MSG.DELETE.>",
	"$JS.API.ACCOUNT.PURGE.>",
	"$JS.API.STREAM.RESTORE.>",
	"$JS.API.STREAM.SNAPSHOT.>",
	"$JS.API.STREAM.PEER.REMOVE.>",
	"$JS.API.SERVER.>",
	"$JS.API.META.>",
	"$SYS.>",
}

// Stream names as the JetStream API sees them (package stream names them
// too; identity cannot import it: stream is used by services identity's
// users run, and the names are the wire contract).
const (
	intake   = "INTAKE"
	ledger   = "LEDGER"
	claims   = "CLAIMS"
	attest   = "ATTEST"
	kvPrefix = "KV_"
	objStore = "OBJ_artifacts"
)

// The buckets: their streams are KV_<bucket>, their subjects $KV.<bucket>.>.
const (
	bucketContracts = "contracts"
	bucketSessions  = "sessions"
	bucketHeads     = "heads"
	bucketKeys      = "keys"
	bucketPolicies  = "policies"
	bucketTlog      = "tlog"
	bucketLevels    = "levels"
)

// jsRead is what reading stream s takes: its info, direct and stored
// message gets, and ordered (ephemeral) consumers, which nats.go deletes
// when it resets or stops them. No evidence stream has a durable consumer,
// so deleting consumers of these streams loses nothing; the durable
// consumers of INTAKE and CLAIMS are their owners' alone (see Permissions).
func jsRead(s string) []string {
	return []string{
		"$JS.API.STREAM.INFO." + s,
		"$JS.API.DIRECT.GET." + s, "$JS.API.DIRECT.GET." + s + ".>",
		"$JS.API.STREAM.MSG.GET." + s,
		"$JS.API.CONSUMER.CREATE." + s, "$JS.API.CONSUMER.CREATE." + s + ".>",
		"$JS.API.CONSUMER.INFO." + s + ".>",
		"$JS.API.CONSUMER.MSG.NEXT." + s + ".>",
		"$JS.API.CONSUMER.DELETE." + s + ".>",
		// nats.go watches buckets and reads objects with ordered push
		// consumers, which answer the server's flow control.
		"$JS.FC." + s + ".>",
	}
}

// jsQueue is what consuming a queue stream with a durable consumer takes:
// create it, read its info (the purger reads its ack floor), pull, ack,
// unpin (ingest takes partitions over), and purge what was acknowledged.
func jsQueue(s string) []string {
	return []string{
		"$JS.API.STREAM.INFO." + s,
		"$JS.API.CONSUMER.CREATE." + s, "$JS.API.CONSUMER.CREATE." + s + ".>",
		"$JS.API.CONSUMER.DURABLE.CREATE." + s + ".>",
		"$JS.API.CONSUMER.INFO." + s + ".>",
		"$JS.API.CONSUMER.MSG.NEXT." + s + ".>",
		"$JS.API.CONSUMER.UNPIN." + s + ".>",
		"$JS.API.CONSUMER.RESET." + s + ".>",
		"$JS.ACK." + s + ".>",
		"$JS.API.STREAM.PURGE." + s,
	}
}

func kvRead(buckets ...string) []string {
	var out []string
	for _, b := range buckets {
		out = append(out, jsRead(kvPrefix+b)...)
	}
	return out
}

func kvWrite(buckets ...string) []string {
	var out []string
	for _, b := range buckets {
		out = append(out, "$KV."+b+".>")
	}
	return out
}

// common is what every service and CLI identity uses: account info, the
// names of the streams and their configuration and state (a service checks
// every stream at start).
var common = []string{"$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST", "$JS.API.STREAM.INFO.*"}

// readAll is what an auditor reads: every evidence stream, every bucket,
// the artifacts.
func readAll() []string {
	out := append([]string{}, common...)
	for _, s := range []string{ledger, attest, objStore} {
		out = append(out, jsRead(s)...)
	}
	out = append(out, kvRead(bucketContracts, bucketSessions, bucketHeads, bucketKeys, bucketPolicies, bucketTlog, bucketLevels)...)
	return append(out, "$JS.API.STREAM.INFO."+intake, "$JS.API.STREAM.INFO."+claims)
}

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// nameTag is the template the server fills with the user's name tag.
const nameTag = "{{tag(name)}}"

// responses lets a service answer requests it received (gate requests, key
// requests) on their reply subjects, and nowhere else.
var responses = &jwt.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}

// Permissions returns the permission template of a role. Publish and
// subscribe allow lists say everything the role may do; anything not
// listed is refused; the deny lists repeat the dangerous subjects so that
// no allow can reach them.
func Permissions(role string) jwt.Permissions {
	var pub, sub, deny []string
	var resp *jwt.ResponsePermission
	inbox := subject.InboxPrefix + "." + role + "." + nameTag + ".>"
	sub = []string{inbox}
	hookInboxes := subject.InboxPrefix + "." + RoleHook + ".>"
	switch role {
	case RoleHook:
		pub = []string{
			subject.IntakePrefix + "." + subject.OriginHook + "." + nameTag + ".>",
			subject.GatePrefix + "." + nameTag + ".>",
		}
	case RoleIngest:
		pub = cat(common, jsQueue(intake), jsRead(ledger), jsRead(objStore), kvRead(bucketContracts, bucketHeads),
			[]string{subject.LedgerAll, subject.ClaimsPrefix + ".>", hookInboxes, "$O.artifacts.>"}, kvWrite(bucketContracts))
		deny = []string{"$JS.API.STREAM.PURGE." + ledger, "$JS.API.STREAM.PURGE." + attest, "$JS.API.STREAM.PURGE." + objStore}
	case RoleVerifier:
		pub = cat(common, jsQueue(claims), jsRead(ledger), jsRead(attest), kvRead(bucketKeys, bucketPolicies, bucketHeads),
			[]string{subject.LedgerAll, subject.AttestPrefix + ".>", hookInboxes}, kvWrite(bucketPolicies))
		deny = []string{"$JS.API.STREAM.PURGE." + ledger, "$JS.API.STREAM.PURGE." + attest, "$JS.API.STREAM.PURGE." + intake}
	case RoleGatekeeper:
		pub = cat(common, jsRead(ledger), jsRead(attest),
			kvRead(bucketKeys, bucketPolicies, bucketHeads, bucketTlog, bucketLevels), []string{
				subject.IntakePrefix + "." + subject.OriginGatekeeper + "." + nameTag + ".>",
				subject.IntakePrefix + "." + subject.OriginHTTP + "." + nameTag + ".>",
			}, kvWrite(bucketLevels))
		sub = append(sub, subject.GatePrefix+".*.*", subject.GateLevel)
		resp = responses
	case RoleRotator:
		pub = cat(common, jsRead(ledger), jsRead(attest), kvRead(bucketKeys, bucketHeads, bucketTlog),
			[]string{subject.Ledger(schemas.RotatorChain), "$JS.API.STREAM.PURGE." + ledger}, kvWrite(bucketKeys, bucketHeads, bucketTlog))
		sub = append(sub, subject.RotatorKeys)
		resp = responses
	case RoleAuditor:
		pub = readAll()
	case RoleOperator:
		pub = cat(readAll(), []string{
			subject.IntakePrefix + "." + subject.OriginOperator + "." + nameTag + ".>",
			subject.RotatorKeys,
			subject.GateLevel,
		})
	case RoleAdmin:
		pub = cat(readAll(), []string{
			"$JS.API.STREAM.CREATE.*", "$JS.API.STREAM.UPDATE.*",
			// archive restore puts archived entries back into the hot
			// ledger and anchors the restored chains.
			subject.LedgerAll,
		}, kvWrite(bucketHeads))
		deny = []string{"$JS.API.STREAM.PURGE.>"}
	}
	if role == RoleHook {
		// Its two allow lists are all it may do; the server builds the
		// permissions anew for every connection, one per hook run, so the
		// hook's repeat only the account purge (CVE-2025-30215).
		return jwt.Permissions{
			Pub: jwt.Permission{Allow: pub, Deny: []string{"$JS.API.ACCOUNT.PURGE.>"}},
			Sub: jwt.Permission{Allow: sub},
		}
	}
	if role != RoleAdmin {
		deny = append(deny, "$JS.API.STREAM.CREATE.>", "$JS.API.STREAM.UPDATE.>")
	}
	deny = append(deny, deniedToAll...)
	if role != RoleIngest && role != RoleVerifier {
		// Only their owners touch the durable consumers of the queues.
		deny = append(deny, "$JS.API.CONSUMER.DELETE."+intake+".>", "$JS.API.CONSUMER.DELETE."+claims+".>",
			"$JS.API.CONSUMER.CREATE."+intake+".>", "$JS.API.CONSUMER.CREATE."+claims+".>",
			"$JS.API.CONSUMER.DURABLE.CREATE."+intake+".>", "$JS.API.CONSUMER.DURABLE.CREATE."+claims+".>")
	}
	if role != RoleRotator {
		deny = append(deny, "$JS.API.STREAM.PURGE."+ledger)
	}
	return jwt.Permissions{
		Pub:  jwt.Permission{Allow: pub, Deny: deny},
		Sub:  jwt.Permission{Allow: sub, Deny: []string{"$SYS.>"}},
		Resp: resp,
	}
}
