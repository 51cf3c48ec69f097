"""What a daemon may do and spend: resource limits, and the workspace's config.toml."""
