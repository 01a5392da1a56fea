// Package search finds clips in the catalog: the query a client sends
// (filters, keywords or a description, a sort and a page), the SQL it
// becomes, the keyword walk, the semantic ranking, keyset cursors, bounded
// counts and the filter values in use. It reads what package catalog
// writes, through the catalog's read routing (replicas), and imports it.
package search
