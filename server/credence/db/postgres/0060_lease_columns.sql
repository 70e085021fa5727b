-- One lease vocabulary for every claimed row (jobs, both outboxes, the embedding backfill):
-- lease_owner holds it, lease_until is when it lapses, attempts counts claims where counted.
-- No index, trigger or view names either old column, so a rename is all it takes.
ALTER TABLE jobs RENAME COLUMN lease_expires_at TO lease_until;
ALTER TABLE backfill_leases RENAME COLUMN owner TO lease_owner;
