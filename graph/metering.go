package graph

import (
	"entgo.io/contrib/entgql"

	"github.com/virtflow/virtflow/domain/metering"
	"github.com/virtflow/virtflow/graph/model"
)

// invoicePage is the page of invoices after the cursor (an invoice's position, newest
// first) of at most first invoices (all without first).
func invoicePage(all []*metering.Invoice, after *entgql.Cursor[int], first *int) *model.InvoiceConnection {
	start := 0
	if after != nil {
		start = min(max(after.ID+1, 0), len(all))
	}
	end := len(all)
	if first != nil && *first >= 0 {
		end = min(end, start+*first)
	}
	conn := &model.InvoiceConnection{TotalCount: len(all), Edges: make([]*model.InvoiceEdge, 0, end-start)}
	for i := start; i < end; i++ {
		conn.Edges = append(conn.Edges, &model.InvoiceEdge{Node: all[i], Cursor: entgql.Cursor[int]{ID: i}})
	}
	conn.PageInfo = &entgql.PageInfo[int]{HasNextPage: end < len(all), HasPreviousPage: start > 0}
	if len(conn.Edges) > 0 {
		conn.PageInfo.StartCursor = &conn.Edges[0].Cursor
		conn.PageInfo.EndCursor = &conn.Edges[len(conn.Edges)-1].Cursor
	}
	return conn
}

// money is an amount in millionths as the API writes it.
func money(micro int64, currency string) *model.Money {
	return &model.Money{Amount: metering.FormatMicro(micro), Currency: currency}
}
