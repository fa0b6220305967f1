package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Codec is the Connect codec of this protocol: encoding/json on the plain
// structs of this package. It is registered under the name "json" so that
// the content type is the usual application/json (and the gRPC protocol's
// application/grpc+json); it replaces Connect's protobuf JSON codec, which
// only takes generated protobuf messages.
type Codec struct{}

// Name is the codec's name in content types.
func (Codec) Name() string { return "json" }

// Marshal encodes a message.
func (Codec) Marshal(m any) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", m, err)
	}
	return b, nil
}

// Unmarshal decodes a message, refusing fields this version does not know
// (a peer of another version is then told so instead of being half
// understood). An empty body is an empty message.
func (Codec) Unmarshal(b []byte, m any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(m); err != nil {
		return fmt.Errorf("decoding %T: %w", m, err)
	}
	if d.More() {
		return fmt.Errorf("decoding %T: data after the message", m)
	}
	return nil
}
