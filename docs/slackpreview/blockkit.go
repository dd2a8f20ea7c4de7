package main

import (
	"encoding/json"
	"fmt"
)

// The subset of Block Kit (api.slack.com/reference/block-kit) the
// renderer understands. Unknown block and element types decode fine and
// are shown as a placeholder, so a new block type in the notifier is
// visible in the picture rather than silently dropped.

type block struct {
	Type      string    `json:"type"`
	BlockID   string    `json:"block_id"`
	Text      *textObj  `json:"text"`
	Fields    []textObj `json:"fields"`
	Accessory *element  `json:"accessory"`
	Elements  []element `json:"elements"`
	ImageURL  string    `json:"image_url"`
	AltText   string    `json:"alt_text"`
	Title     *textObj  `json:"title"`
}

// textObj is a composition text object: plain_text or mrkdwn.
type textObj struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji"`
}

// element is a block element (button, image) or, in context blocks, a
// text object, whose "text" is a string instead of an object.
type element struct {
	Type     string
	Text     textObj // buttons: the label; context text: the text itself
	ActionID string
	URL      string
	Style    string
	ImageURL string
	AltText  string
}

func (e *element) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type     string          `json:"type"`
		Text     json.RawMessage `json:"text"`
		ActionID string          `json:"action_id"`
		URL      string          `json:"url"`
		Style    string          `json:"style"`
		ImageURL string          `json:"image_url"`
		AltText  string          `json:"alt_text"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*e = element{Type: raw.Type, ActionID: raw.ActionID, URL: raw.URL, Style: raw.Style, ImageURL: raw.ImageURL, AltText: raw.AltText}
	if len(raw.Text) == 0 || string(raw.Text) == "null" {
		return nil
	}
	if raw.Text[0] == '"' {
		e.Text.Type = raw.Type
		return json.Unmarshal(raw.Text, &e.Text.Text)
	}
	if err := json.Unmarshal(raw.Text, &e.Text); err != nil {
		return fmt.Errorf("%s element text: %w", raw.Type, err)
	}
	return nil
}

// parseBlocks decodes a Block Kit "blocks" array.
func parseBlocks(data []byte) ([]block, error) {
	var bs []block
	if err := json.Unmarshal(data, &bs); err != nil {
		return nil, fmt.Errorf("blocks are not a Block Kit array: %w", err)
	}
	return bs, nil
}
