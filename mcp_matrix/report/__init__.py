"""Writers: each reads the results stream and produces one format."""
