// Package collections is a key's shortlists of clips: collections, their
// items in the order added, the caps on both, who may read and change
// them, buying a collection whole through billing's one purchase
// statement, and the removal of a revoked key's collections once its
// retention has passed.
//
// Who may see a collection (visible.go): the key that made it, and that
// key's root (over broll_key_family, as purchases); live and test
// collections are apart, as test purchases are. Only the key that made a
// collection changes it. REST and MCP call the same methods of Service.
package collections
