package scenario

import (
	"github.com/goccy/go-yaml/ast"
)

// resolve rewrites the tree so that it holds no anchors, aliases or merge
// keys: an anchor is replaced by its value, an alias by the value of the
// anchor it names (shared, not copied), and a "<<" merge key by the entries
// it merges (keys written in the mapping itself win). The rest of the loader
// then decodes plain trees, which matters because variants and --set
// overrides are decoded separately from the document that defined the
// anchors. Errors point at the offending alias or key.
type resolver struct {
	w       *walker
	anchors map[string]ast.Node
}

// maxDepth bounds nesting; scenario files are a few levels deep.
const maxDepth = 64

func resolve(w *walker, n ast.Node) (ast.Node, error) {
	r := &resolver{w: w, anchors: map[string]ast.Node{}}
	return r.node(n, 0)
}

func (r *resolver) node(n ast.Node, depth int) (ast.Node, error) {
	if depth > maxDepth {
		return nil, r.w.errf(n, "", "nested too deeply (more than %d levels)", maxDepth)
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		val, err := r.node(v.Value, depth+1)
		if err != nil {
			return nil, err
		}
		r.anchors[anchorName(v.Name)] = val
		return val, nil
	case *ast.AliasNode:
		name := anchorName(v.Value)
		val, ok := r.anchors[name]
		if !ok {
			return nil, r.w.errf(v, "", "alias *%s names no anchor defined before it", name)
		}
		return val, nil
	case *ast.MappingValueNode:
		m := ast.Mapping(v.GetToken(), v.IsFlowStyle, v)
		return r.node(m, depth)
	case *ast.MappingNode:
		var merged []*ast.MappingValueNode
		explicit := map[string]bool{}
		for _, mv := range v.Values {
			if s, ok := mv.Key.(*ast.StringNode); ok {
				explicit[s.Value] = true
			}
		}
		values := make([]*ast.MappingValueNode, 0, len(v.Values))
		for _, mv := range v.Values {
			val, err := r.node(mv.Value, depth+1)
			if err != nil {
				return nil, err
			}
			if _, ok := mv.Key.(*ast.MergeKeyNode); !ok {
				mv.Value = val
				values = append(values, mv)
				continue
			}
			// "<<: *a" or "<<: [*a, *b]": earlier sources win.
			var srcs []ast.Node
			if seq, ok := val.(*ast.SequenceNode); ok {
				srcs = seq.Values
			} else {
				srcs = []ast.Node{val}
			}
			for _, src := range srcs {
				sm, ok := src.(*ast.MappingNode)
				if !ok {
					return nil, r.w.errf(mv.Key, "", "a merge key (<<) needs a mapping or a list of mappings, got %s", describe(src))
				}
				for _, e := range sm.Values {
					s, ok := e.Key.(*ast.StringNode)
					if !ok || explicit[s.Value] {
						continue
					}
					explicit[s.Value] = true
					merged = append(merged, e)
				}
			}
		}
		v.Values = append(values, merged...)
		return v, nil
	case *ast.SequenceNode:
		for i, x := range v.Values {
			val, err := r.node(x, depth+1)
			if err != nil {
				return nil, err
			}
			v.Values[i] = val
		}
		return v, nil
	case *ast.TagNode:
		return v, nil // rejected by the walker with its position
	}
	return n, nil
}

func anchorName(n ast.Node) string {
	if n == nil {
		return ""
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return n.String()
}
