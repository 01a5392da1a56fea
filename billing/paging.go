package billing

import "broll/internal/paging"

// ListBounds are a purchase listing's paging limits, for the adapters to
// read a request's paging with: limit default 50, clamped to 500 however
// large; offset + limit bounded by maxListWindow (a cursor goes further).
var ListBounds = paging.Bounds{DefaultLimit: defaultListLimit, MaxLimit: maxListLimit, Window: maxListWindow}

// LegacyListBounds are the v0 listing's: the same, by page or offset only
// (v0 has no cursor).
var LegacyListBounds = paging.Bounds{DefaultLimit: defaultListLimit, MaxLimit: maxListLimit, Window: maxListWindow, NoCursor: true}
