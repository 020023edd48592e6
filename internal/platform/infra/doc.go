// Package infra opens VirtFlow's backing services: the database (PostgreSQL through lib/pq when
// DATABASE_URL is set, otherwise an embedded SQLite file) with its schema migrated, and Redis
// (REDIS_URL, otherwise an in-process miniredis).
package infra
