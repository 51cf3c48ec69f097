"""The one writing path: carrying a planner's splices, the stale refusal, what agents were shown."""
