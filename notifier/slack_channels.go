package notifier

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

const (
	// channelsLimit is the page size of conversations.list, the most
	// Slack serves in one page.
	channelsLimit = 1000
	// channelsMaxPages bounds a name lookup: 10,000 channels, the
	// archived ones left out.
	channelsMaxPages = 10
)

// isChannelID reports whether a configured channel is already an ID
// (C…, G… or D…, upper case and digits), which conversations.history
// takes; a name ("#alerts", "alerts") is not: Slack's channel names are
// lower case.
func isChannelID(ch string) bool {
	if len(ch) < 2 || !strings.ContainsRune("CGD", rune(ch[0])) {
		return false
	}
	for _, r := range ch[1:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// channelFor returns the ID of a configured channel for the crash
// recovery's history lookup: the one Slack answered earlier posts with,
// or, when the process died before any post to it was answered, the one
// conversations.list gives for the name (which needs the channels:read
// scope, and groups:read for a private channel). What it learns is
// journaled, so the next restart does not ask again.
func (s *slackNotifier) channelFor(ctx context.Context, api *slack.Client, configured string) (string, error) {
	if id := s.journal.channelID(configured); isChannelID(id) {
		return id, nil
	}
	id, err := lookupChannel(ctx, api, configured)
	if err != nil {
		return configured, err
	}
	s.journal.learnChannel(configured, id)
	s.logger.Info("found the ID of the configured channel for a history lookup", "channel", configured, "id", id)
	return id, nil
}

// lookupChannel pages through conversations.list for a channel named
// name ("#" optional), within channelsMaxPages and ctx, waiting out a 429
// when ctx leaves time for it.
func lookupChannel(ctx context.Context, api *slack.Client, name string) (string, error) {
	name = strings.TrimPrefix(name, "#")
	p := &slack.GetConversationsParameters{
		ExcludeArchived: true,
		Limit:           channelsLimit,
		Types:           []string{"public_channel", "private_channel"},
	}
	for page := 0; ; {
		if page == channelsMaxPages {
			return "", fmt.Errorf("%w: no channel named %q in the first %d pages of conversations.list", errHistoryBound, name, page)
		}
		chans, next, err := api.GetConversationsContext(ctx, p)
		retry, past, err := waitRateLimit(ctx, err)
		if retry {
			continue
		}
		if past > 0 {
			return "", fmt.Errorf("%w: conversations.list rate limited, Retry-After %s is past the time budget", errHistoryBound, past)
		}
		switch {
		case err == nil:
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return "", fmt.Errorf("%w: the time budget ran out after %d pages of conversations.list", errHistoryBound, page)
		case ctx.Err() != nil:
			return "", ctx.Err()
		default:
			return "", fmt.Errorf("conversations.list: %s", slackErrText(err))
		}
		page++
		for _, c := range chans {
			if c.Name == name || c.NameNormalized == name {
				return c.ID, nil
			}
		}
		if next == "" {
			return "", fmt.Errorf("no channel named %q the app can see in conversations.list", name)
		}
		p.Cursor = next
	}
}
