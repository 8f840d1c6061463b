-- Retention: a SessionDO empties its storage some time after its session ended and was fully observed. The
-- events it had given up on (dead letters) are counted here before they go.
ALTER TABLE sessions ADD COLUMN dead_letters INTEGER NOT NULL DEFAULT 0;
