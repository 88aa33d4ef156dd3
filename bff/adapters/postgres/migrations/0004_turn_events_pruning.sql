-- Events of turns long settled are pruned (TurnEventLog.PruneTurnEvents):
-- a browser that comes back later is answered from the turns table.
CREATE INDEX turn_events_at ON turn_events (at);
