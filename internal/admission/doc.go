// Package admission is the door every API request goes through, and the
// machinery behind it that nothing else sees: in one Redis round trip per
// request the GCRA rate limit, the revocation markers of the key and its
// root, the key's settings marker, the Redis epoch and the count of the
// request, with an in-process stand-in while Redis is away; and the marks
// that let a node answer from its own copies (of clip details, of what a
// key owns) exactly as long as nothing they copy has changed.
//
// Its users see one small interface, Door: the API edge admits (Admit,
// Readmit; AdmitWithoutCopies for a request that reads no copies, whose
// admission reads no marks), and whoever changes what a node may copy holds it across the
// commit (Hold: the catalog's writes, the purchase batcher). What a request's
// admission saw travels with the request as a Pass, which the clip cache
// asks which copies it may trust. A hold made in this process ends the
// trust of every Pass issued before it, so a request that buys and then
// reads (an MCP batch) sees its purchase whoever made it.
//
// It sits with internal/, beneath every domain package: tenancy, the
// catalog and billing all use it, and it imports none of them. tenancy
// keeps the usage counters it counts in (Counter) and writes the
// revocation and settings markers it reads (MarkRevoked, MarkChanged).
package admission
